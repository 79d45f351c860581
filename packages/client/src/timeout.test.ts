/**
 * Opt-in time limits: the client-wide `timeout: timeoutAfter(ms)` (default: none, as with fetch),
 * overridable per request, combined with the request's own `signal`. A timeout throws a TimeoutError (code TIMEOUT); an abort stays a NetworkError
 * (code ABORTED). No test here measures time: fetches wait for the abort or for a test's signal.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { staticToken } from "./access-token-source.js";
import { createTenantClient } from "./create-tenant-client.js";
import { NetworkError, TimeoutError } from "./errors.js";
import type { FetchLike } from "@tenant-integration/internal";
import { json } from "./test-support/fake-fetch.js";
import { timeoutAfter } from "./timeout.js";

const baseUrl = "https://acme.tenant.example";
const TOKEN = "at_Timeout";

/**
 * Requests in flight in {@link hanging}, kept as a real transport keeps them (a socket holds its
 * request). Without this, nothing would reach the pending request: the garbage collector could drop
 * it, and with it undici's link from the caller's signal to `request.signal`, so the abort would
 * never arrive (regression: this test hung about one run in five under a full suite).
 */
const inFlight = new Set<Request>();

/** A fetch that never answers: it rejects with the signal's reason once the request is aborted. */
const hanging: FetchLike = (input) =>
  new Promise((_, reject) => {
    const request = input as Request;
    const { signal } = request;
    if (signal.aborted) return reject(signal.reason);
    inFlight.add(request);
    signal.addEventListener(
      "abort",
      () => {
        inFlight.delete(request);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** A fetch that answers 200 once `release` is called, or rejects as soon as the request is aborted. */
function gated(): { fetch: FetchLike; release: () => void } {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const fetch: FetchLike = async (input) => {
    const { signal } = input as Request;
    const aborted = new Promise<never>((_, reject) =>
      signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
    );
    await Promise.race([gate, aborted]);
    return json(200, { ok: true });
  };
  return { fetch, release };
}

describe("timeout: timeoutAfter(ms)", () => {
  it("has none by default, as fetch: a call that takes a day is waited for", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const { fetch, release } = gated();
      const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch });
      const pending = client.GET("/api/v1/auth/user");
      await vi.advanceTimersByTimeAsync(24 * 60 * 60 * 1000);
      release();
      expect((await pending).data).toEqual({ ok: true });
    } finally {
      vi.useRealTimers();
    }
  });

  it("throws a TimeoutError with code TIMEOUT when the client-wide timeout passes", async () => {
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch: hanging, timeout: timeoutAfter(20) });
    const failure = await client.GET("/api/v1/auth/user").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TimeoutError);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(failure).toMatchObject({
      name: "TimeoutError",
      code: "TIMEOUT",
      method: "GET",
      url: `${baseUrl}/api/v1/auth/user`,
    });
    expect(String(failure)).not.toContain(TOKEN);
  });

  it("takes a per-request timeout over the client's, and false lifts the client's for one call", async () => {
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch: hanging });
    await expect(client.GET("/api/v1/auth/user", { timeout: timeoutAfter(20) })).rejects.toBeInstanceOf(TimeoutError);

    // the client's short timeout is lifted for this request: it waits for the answer
    const { fetch, release } = gated();
    const patient = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch, timeout: timeoutAfter(1) });
    const pending = patient.GET("/api/v1/auth/user", { timeout: false });
    await new Promise((resolve) => setTimeout(resolve, 30));
    release();
    expect((await pending).data).toEqual({ ok: true });

    // a call that says nothing of a timeout keeps the client's
    const strict = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch: hanging, timeout: timeoutAfter(1) });
    await expect(strict.GET("/api/v1/auth/user", { timeout: undefined })).rejects.toBeInstanceOf(TimeoutError);
  });

  it("keeps the caller's signal working next to the timeout: an abort is ABORTED, not TIMEOUT", async () => {
    const controller = new AbortController();
    // with a timeout as well, so that the two signals are combined
    const client = createTenantClient({
      baseUrl,
      auth: staticToken(TOKEN),
      fetch: hanging,
      timeout: timeoutAfter(60_000),
    });
    const pending = client.GET("/api/v1/auth/user", { signal: controller.signal });
    controller.abort();
    const failure = await pending.catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(failure).not.toBeInstanceOf(TimeoutError);
    expect((failure as NetworkError).code).toBe("ABORTED");
  });

  it("refuses a limit that is not a positive number of ms a timer can take", () => {
    // 2^31 ms would overflow the timer and fire at once; Infinity is no limit: leave the timeout out
    for (const ms of [0, -1, Number.NaN, Infinity, 2 ** 31, "1000" as unknown as number]) {
      expect(() => timeoutAfter(ms), String(ms)).toThrow(
        expect.objectContaining({
          name: "TenantClientError",
          code: "INVALID_OPTIONS",
          message: expect.stringContaining(`timeoutAfter(${String(ms)})`),
        }),
      );
    }
    expect(timeoutAfter(2 ** 31 - 1).ms).toBe(2 ** 31 - 1);
  });

  it("refuses a timeout not made by timeoutAfter, client-wide or per request, before anything is sent", async () => {
    for (const timeout of [5_000, true, null, { ms: 5_000 }]) {
      expect(
        () => createTenantClient({ baseUrl, auth: staticToken(TOKEN), timeout: timeout as never }),
        String(timeout),
      ).toThrow(
        expect.objectContaining({
          code: "INVALID_OPTIONS",
          message: "Invalid timeout: pass timeoutAfter(ms), or false",
        }),
      );
    }
    const sent = vi.fn(hanging);
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch: sent });
    await expect(client.GET("/api/v1/auth/user", { timeout: 5_000 as never })).rejects.toMatchObject({
      name: "TenantClientError",
      code: "INVALID_OPTIONS",
      message: "Invalid timeout (per request): pass timeoutAfter(ms), or false",
    });
    expect(sent).not.toHaveBeenCalled();
  });

  it("passes the token source's own error on unchanged, even when it comes after the timeout fired", async () => {
    const ended = Object.assign(new Error("session ended"), { code: "SESSION_ENDED" });
    const auth = {
      getAccessToken: async () => TOKEN,
      onUnauthorized: () => new Promise<void>((_, reject) => setTimeout(() => reject(ended), 50)),
    };
    const client = createTenantClient({ baseUrl, auth, fetch: async () => json(401, {}), timeout: timeoutAfter(20) });
    await expect(client.GET("/api/v1/auth/user")).rejects.toBe(ended);
  });

  describe("against a real server that stalls", () => {
    let server: Server;
    let url = "";
    beforeAll(async () => {
      // headers at once, then a body that never ends
      server = createServer((_, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"partial":');
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it("throws a TimeoutError when the body stalls after the headers came", async () => {
      const client = createTenantClient({ baseUrl: url, auth: staticToken(TOKEN), timeout: timeoutAfter(100) });
      const failure = await client.GET("/api/v1/auth/user").catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(TimeoutError);
      expect((failure as TimeoutError).code).toBe("TIMEOUT");
    });
  });
});
