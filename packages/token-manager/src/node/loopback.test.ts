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
