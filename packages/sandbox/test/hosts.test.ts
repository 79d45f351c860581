import { request as httpRequest } from "node:http";
import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { HostConfigError, isLoopbackHostname, startSandbox } from "../src/index.js";
import { normalizeHostname } from "../src/hosts.js";
import { CLIENT_ID, REDIRECT_URI, testSandbox } from "./helpers.js";

/** A raw HTTP request with the Host header a DNS-rebinding page would send. */
function withHost(
  url: string,
  path: string,
  host: string,
  method = "GET",
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      {
        method,
        headers: { host, ...(body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }) },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const authorizePath = `/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, response_type: "code" }).toString()}`;

// Issue 12, point 4: a web page on a rebinding name reached the test routes and the consent form.
describe("the Host check against DNS rebinding", () => {
  it.each([
    ["GET", "/__sandbox/clock", undefined],
    ["POST", "/__sandbox/clock", "advanceSeconds=1"],
    ["GET", "/__sandbox/events", undefined],
    ["DELETE", "/__sandbox/events", undefined],
    ["GET", "/__sandbox/ledger", undefined],
    ["POST", "/__sandbox/consent", "request_id=x&decision=approve"],
    ["GET", authorizePath, undefined],
  ])("answers %s %s for a foreign Host with 421", async (method, path, body) => {
    const running = await startSandbox({ testClock: true, clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }] });
    try {
      const response = await withHost(running.url, path, `rebind.attacker.example:${running.port}`, method, body);
      expect(response.status).toBe(421);
      expect(JSON.parse(response.body)).toMatchObject({ error: "misdirected_request" });
    } finally {
      await running.close();
    }
  });

  it("answers loopback names", async () => {
    const running = await startSandbox({ testClock: true });
    try {
      for (const host of ["127.0.0.1", "localhost", "app.localhost", "127.1.2.3", "[::1]", "LOCALHOST"]) {
        expect((await withHost(running.url, "/__sandbox/clock", `${host}:${running.port}`)).status, host).toBe(200);
      }
    } finally {
      await running.close();
    }
  });

  // A non-loopback address of this machine, which the Host check accepts only as the --host listened on.
  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && !i.internal && i.family === "IPv4")?.address;

  it.skipIf(lanAddress === undefined)(
    "answers the non-loopback --host it listens on, which a sandbox on another host refuses",
    async () => {
      const listening = await startSandbox({ testClock: true, host: lanAddress! });
      const other = await startSandbox({ testClock: true });
      try {
        expect((await withHost(listening.url, "/__sandbox/clock", `${lanAddress}:${listening.port}`)).status).toBe(200);
        expect((await withHost(other.url, "/__sandbox/clock", `${lanAddress}:${other.port}`)).status).toBe(421);
      } finally {
        await listening.close();
        await other.close();
      }
    },
  );

  it("answers names given in allowedHosts, and no others", async () => {
    const running = await startSandbox({ testClock: true, allowedHosts: ["Tenant.Test"] });
    try {
      expect((await withHost(running.url, "/__sandbox/clock", "tenant.test")).status).toBe(200);
      expect((await withHost(running.url, "/__sandbox/clock", "tenant.test.attacker.example")).status).toBe(421);
      expect((await withHost(running.url, "/__sandbox/clock", "localhost.attacker.example")).status).toBe(421);
    } finally {
      await running.close();
    }
  });

  it("in process, accepts loopback URLs and configured base URLs through fetch and app.request", async () => {
    const sandbox = testSandbox({ allowedHosts: ["tenant.test"] });
    expect((await sandbox.fetch(new Request("http://127.0.0.1:4020/__sandbox/clock"))).status).toBe(200);
    expect((await sandbox.fetch(new Request("https://tenant.test/__sandbox/clock"))).status).toBe(200);
    expect((await sandbox.app.request("/__sandbox/clock")).status).toBe(200); // app.request's URL is http://localhost
    expect((await sandbox.fetch(new Request("http://attacker.example/__sandbox/clock"))).status).toBe(421);
  });

  it("tells loopback names apart and refuses an allowed host that is more than a host name", () => {
    expect(isLoopbackHostname("127.0.0.1")).toBe(true);
    expect(isLoopbackHostname("[::1]")).toBe(true);
    expect(isLoopbackHostname("localhost.attacker.example")).toBe(false);
    expect(isLoopbackHostname("128.0.0.1")).toBe(false);
    expect(normalizeHostname("::1")).toBe("[::1]");
    for (const bad of ["", "tenant.test:4020", "http://tenant.test", "tenant.test/path", "a b"]) {
      expect(() => normalizeHostname(bad), bad).toThrow(HostConfigError);
    }
  });
});
