import { createServer, type Server } from "node:http";
import { describe, expect, it, onTestFinished } from "vitest";
import { TokenManagerError } from "../errors.js";
import { failure } from "../test-support/failure.js";
import { startSandboxProcess } from "../test-support/processes.js";
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

  it("says, when no callback arrives in time, CALLBACK_TIMEOUT (the Python kit's code), which redirect URI waited and what to check (regression: issues 20 and 27)", async () => {
    const port = await freePort();
    const server = await waitForCallback(`http://127.0.0.1:${port}/callback`, { timeoutMs: 50 });
    const error = await server.callback.catch((e: unknown) => e);
    expect(error).toEqual(failure("CALLBACK_TIMEOUT"));
    expect((error as Error).message).toBe(
      `CALLBACK_TIMEOUT: no authorization callback arrived at http://127.0.0.1:${port}/callback within 0.05 s. ` +
        "If the browser showed the tenant's error page instead, this redirect URI is not registered for the client " +
        "exactly as written (scheme, host, port and path): register it, or use the registered one",
    );
  });

  it("refuses a busy port with CALLBACK_PORT_IN_USE naming the port, not a raw EADDRINUSE (regression: issue 20)", async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const { port } = busy.address() as { port: number };
    const error = await waitForCallback(`http://127.0.0.1:${port}/callback`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenManagerError);
    expect(error).toMatchObject({ name: "TokenManagerError", code: "CALLBACK_PORT_IN_USE", port });
    expect((error as Error).message).toBe(
      `CALLBACK_PORT_IN_USE: port ${port} of 127.0.0.1 is in use by another program (an earlier sign-in still waiting?). ` +
        "The redirect URI's port is registered with the tenant: stop that program rather than choosing another port",
    );
    expect((error as Error).cause).toMatchObject({ code: "EADDRINUSE" });
  });
});

describe("checkRedirect: asking the tenant at once whether it knows the redirect URI", () => {
  it("rejects with REDIRECT_URI_REFUSED when the tenant shows its error page for an unregistered redirect URI, and ends the wait for the callback", async () => {
    const registered = `http://127.0.0.1:${await freePort()}/callback`;
    const sandbox = await startSandboxProcess("probe-cli", registered);
    onTestFinished(() => sandbox.close());
    const other = `http://127.0.0.1:${await freePort()}/callback`;
    const server = await waitForCallback(other);
    const authorize = `${sandbox.url}/oauth/authorize?response_type=code&client_id=probe-cli&redirect_uri=${encodeURIComponent(other)}&scope=profile%3Aread&state=s&code_challenge=${"c".repeat(43)}&code_challenge_method=S256`;
    const error = await server.checkRedirect(authorize).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "TokenManagerError", code: "REDIRECT_URI_REFUSED", status: 400 });
    expect((error as Error).message).toBe(
      `REDIRECT_URI_REFUSED: the tenant answered the authorize request with an error page (HTTP 400) instead of redirecting to ${other}: ` +
        "check that this redirect URI is registered for client probe-cli exactly as written (scheme, host, port and path), and the client id",
    );
    await expect(server.callback).rejects.toBe(error);
  });

  it("resolves when the tenant would redirect to the registered redirect URI, without approving anything or following the redirect", async () => {
    const port = await freePort();
    const registered = `http://127.0.0.1:${port}/callback`;
    const sandbox = await startSandboxProcess("probe-cli", registered);
    onTestFinished(() => sandbox.close());
    const server = await waitForCallback(registered);
    onTestFinished(() => server.close());
    const authorize = `${sandbox.url}/oauth/authorize?response_type=code&client_id=probe-cli&redirect_uri=${encodeURIComponent(registered)}&scope=profile%3Aread&state=s&code_challenge=${"c".repeat(43)}&code_challenge_method=S256`;
    await expect(server.checkRedirect(authorize)).resolves.toBeUndefined();
    // The server still waits: the probe's redirect (an error, no code) was not followed to it.
    const page = await fetch(`${registered}?code=c3&state=s3`);
    expect(page.status).toBe(200);
    expect(await server.callback).toBe(`${registered}?code=c3&state=s3`);
  });

  it("sends only client_id and redirect_uri (no state, no challenge), so the probe can approve nothing", async () => {
    const port = await freePort();
    const registered = `http://127.0.0.1:${port}/callback`;
    const server = await waitForCallback(registered);
    onTestFinished(() => server.close());
    const seen: string[] = [];
    const fetch = async (input: string | URL | Request) => {
      seen.push(String(input));
      return new Response(null, { status: 302, headers: { Location: `${registered}?error=invalid_request` } });
    };
    await server.checkRedirect(
      `https://acme.tenant.test/oauth/authorize?response_type=code&client_id=cli&redirect_uri=${encodeURIComponent(registered)}&state=secret-state&code_challenge=x`,
      { fetch },
    );
    expect(seen).toEqual([
      `https://acme.tenant.test/oauth/authorize?client_id=cli&redirect_uri=${encodeURIComponent(registered)}`,
    ]);
  });

  it.each([
    ["a login page (200)", () => new Response("<form>", { status: 200 })],
    ["a server error", () => new Response("down", { status: 503 })],
    ["no answer", () => Promise.reject(new TypeError("fetch failed"))],
  ])("tells nothing on %s: resolves, and the wait goes on", async (_name, answer) => {
    const port = await freePort();
    const registered = `http://127.0.0.1:${port}/callback`;
    const server = await waitForCallback(registered);
    onTestFinished(() => server.close());
    await expect(
      server.checkRedirect(`https://acme.tenant.test/oauth/authorize?client_id=cli&redirect_uri=x`, {
        fetch: async () => answer(),
      }),
    ).resolves.toBeUndefined();
  });
});
