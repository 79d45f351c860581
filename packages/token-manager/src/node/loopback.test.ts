import { describe, expect, it } from "vitest";
import { failure } from "../testing/failure.js";
import { waitForCallback } from "./loopback.js";

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe("waitForCallback", () => {
  it("resolves with the full callback URL of the first GET to the redirect path, then closes", async () => {
    const port = await freePort();
    const server = await waitForCallback(`http://127.0.0.1:${port}/callback`);
    const other = await fetch(`http://127.0.0.1:${port}/favicon.ico`);
    expect(other.status).toBe(404);
    const page = await fetch(`http://127.0.0.1:${port}/callback?code=c1&state=s1`);
    expect(page.status).toBe(200);
    expect(await server.callback).toBe(`http://127.0.0.1:${port}/callback?code=c1&state=s1`);
    await expect(fetch(`http://127.0.0.1:${port}/callback`)).rejects.toThrow();
  });

  it("with port 0, listens on a free port and tells the bound redirect URI, which receives the callback", async () => {
    const server = await waitForCallback("http://127.0.0.1:0/callback?app=cli");
    const bound = new URL(server.redirectUri);
    expect(bound.port).not.toBe("0");
    expect(Number(bound.port)).toBeGreaterThan(0);
    expect(server.redirectUri).toBe(`http://127.0.0.1:${bound.port}/callback?app=cli`);
    const page = await fetch(`http://127.0.0.1:${bound.port}/callback?code=c2&state=s2`);
    expect(page.status).toBe(200);
    expect(await server.callback).toBe(`http://127.0.0.1:${bound.port}/callback?code=c2&state=s2`);
  });

  it("tells a fixed-port redirect URI exactly as given, so that it still matches the registered one", async () => {
    const port = await freePort();
    const given = `http://localhost:${port}/callback`;
    const server = await waitForCallback(new URL(given));
    expect(server.redirectUri).toBe(given);
    server.close();
    await expect(server.callback).rejects.toThrow(failure("INVALID_CALLBACK"));
  });

  it("rejects with INVALID_CALLBACK when closed before a callback arrives", async () => {
    const port = await freePort();
    const server = await waitForCallback(`http://127.0.0.1:${port}/cb`);
    server.close();
    await expect(server.callback).rejects.toThrow(failure("INVALID_CALLBACK"));
  });

  it("refuses a redirect URI that is not http on a loopback address with a port", async () => {
    await expect(waitForCallback("https://app.example.org/callback")).rejects.toThrow(failure("INVALID_OPTIONS"));
    await expect(waitForCallback("http://example.org:8080/callback")).rejects.toThrow(failure("INVALID_OPTIONS"));
    await expect(waitForCallback("http://127.0.0.1/callback")).rejects.toThrow(failure("INVALID_OPTIONS"));
  });
});
