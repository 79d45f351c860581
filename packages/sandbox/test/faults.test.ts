/**
 * Fault injection (issue 20): the next N requests to a route get an error status with
 * `Retry-After`, a slow answer or a dropped connection, in-process, over HTTP and from the CLI
 * flag; `createTestTenant` takes a fetch wrapper.
 */
import { describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "../src/args.js";
import { createSandbox, FaultConfigError, startSandbox, type FetchLike, type Sandbox } from "../src/index.js";
import { createTestTenant } from "../src/testing.js";
import { CLIENT_ID, REDIRECT_URI, testSandbox } from "./helpers.js";

const BASE = "http://127.0.0.1:4020";
const USER = `${BASE}/api/v1/auth/user`;

function signedIn(sandbox: Sandbox): string {
  return sandbox.issueTokens(CLIENT_ID, ["profile:read"]).accessToken;
}

const getUser = (sandbox: Sandbox, token: string, init: RequestInit = {}) =>
  sandbox.fetch(USER, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) },
  });

const postFault = (sandbox: Sandbox, body: unknown) =>
  sandbox.fetch(`${BASE}/__sandbox/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a status fault", () => {
  it("answers the next two requests to the route with 429 and Retry-After, then the route answers again", async () => {
    const sandbox = testSandbox();
    const token = signedIn(sandbox);
    sandbox.faults.add({ route: "/api/v1/auth/user", kind: "status", status: 429, retryAfter: 3, count: 2 });
    for (let i = 0; i < 2; i++) {
      const answer = await getUser(sandbox, token);
      expect(answer.status).toBe(429);
      expect(answer.headers.get("retry-after")).toBe("3");
      expect(answer.headers.get("cache-control")).toBe("no-store");
      expect(await answer.json()).toMatchObject({ error: "temporarily_unavailable" });
    }
    expect((await getUser(sandbox, token)).status).toBe(200);
    expect(sandbox.faults.list()).toEqual([]);
  });

  it.each([500, 503])(
    "answers %i, added over HTTP with POST /__sandbox/faults, and leaves the sandbox unchanged",
    async (status) => {
      const sandbox = testSandbox();
      const added = await postFault(sandbox, { route: "/oauth/token", method: "POST", kind: "status", status });
      expect(added.status).toBe(201);
      expect(await added.json()).toMatchObject({
        id: 1,
        route: "/oauth/token",
        method: "POST",
        kind: "status",
        status,
        remaining: 1,
      });
      const refresh = await sandbox.fetch(`${BASE}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          grant_type: "refresh_token",
          client_id: CLIENT_ID,
          refresh_token: sandbox.issueTokens(CLIENT_ID).refreshToken,
        }),
      });
      expect(refresh.status).toBe(status);
      // the route did not run: no token-endpoint event
      expect(sandbox.events()).toEqual([]);
    },
  );

  it("catches only its method, and a route ending in /* covers the paths under it", async () => {
    const sandbox = testSandbox();
    const token = signedIn(sandbox);
    sandbox.faults.add({ route: "/api/v1/auth/user", method: "POST", kind: "status" });
    expect((await getUser(sandbox, token)).status).toBe(200);
    expect(sandbox.faults.list()).toHaveLength(1);
    sandbox.faults.clear();
    sandbox.faults.add({ route: "/api/v1/*", kind: "status", status: 502 });
    expect((await getUser(sandbox, token)).status).toBe(502);
  });

  it("is readable by an allowed browser origin (CORS headers as on any answer)", async () => {
    const sandbox = testSandbox();
    const origin = new URL(REDIRECT_URI).origin;
    sandbox.faults.add({ route: "/api/v1/auth/user", kind: "status", status: 429, retryAfter: 1 });
    const answer = await getUser(sandbox, signedIn(sandbox), { headers: { origin } });
    expect(answer.status).toBe(429);
    expect(answer.headers.get("access-control-allow-origin")).toBe(origin);
    expect(answer.headers.get("access-control-expose-headers")).toMatch(/Retry-After/);
  });
});

describe("a slow fault", () => {
  it("holds the answer back: a caller that gives up first sees its abort, and the next request is answered at once", async () => {
    const sandbox = testSandbox();
    const token = signedIn(sandbox);
    sandbox.faults.add({ route: "/api/v1/auth/user", kind: "slow", delayMs: 60_000 });
    const controller = new AbortController();
    const slow = getUser(sandbox, token, { signal: controller.signal });
    controller.abort(new DOMException("gave up", "TimeoutError"));
    await expect(slow).rejects.toMatchObject({ name: "TimeoutError" });
    expect((await getUser(sandbox, token)).status).toBe(200);
  });

  it("answers normally once the delay has passed", async () => {
    const sandbox = testSandbox();
    sandbox.faults.add({ route: "/api/v1/auth/user", kind: "slow", delayMs: 20 });
    expect((await getUser(sandbox, signedIn(sandbox))).status).toBe(200);
  });
});

describe("a drop fault", () => {
  it("makes the in-process fetch reject like fetch does when the server hangs up, once", async () => {
    const sandbox = testSandbox();
    const token = signedIn(sandbox);
    sandbox.faults.add({ route: "/api/v1/auth/user", kind: "drop" });
    await expect(getUser(sandbox, token)).rejects.toThrow(new TypeError("fetch failed"));
    expect((await getUser(sandbox, token)).status).toBe(200);
  });

  it("does not count as a bug of the sandbox (onError is not called)", async () => {
    const errors: unknown[] = [];
    const sandbox = testSandbox({ onError: (error) => errors.push(error) });
    sandbox.faults.add({ route: "/api/v1/auth/user", kind: "drop" });
    await expect(getUser(sandbox, signedIn(sandbox))).rejects.toThrow(TypeError);
    expect(errors).toEqual([]);
  });
});

describe("a lose fault", () => {
  it("runs the route, so a refresh rotates the token, and then loses the answer: the old token is rotated away", async () => {
    const sandbox = testSandbox();
    const { refreshToken } = sandbox.issueTokens(CLIENT_ID);
    const refresh = () =>
      sandbox.fetch("http://localhost/oauth/token", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: CLIENT_ID }),
      });
    sandbox.faults.add({ route: "/oauth/token", method: "POST", kind: "lose" });
    await expect(refresh()).rejects.toThrow(new TypeError("fetch failed"));
    // The tenant rotated before the answer was lost: presenting the token again is reuse.
    const again = await refresh();
    expect({ status: again.status, error: ((await again.json()) as { error: string }).error }).toEqual({
      status: 400,
      error: "invalid_grant",
    });
    expect(sandbox.ledger.list().reuses).toHaveLength(1);
  });
});

describe("faults over a real server", () => {
  it("closes the connection without an answer, answers slowly, and answers 503, each for its count", async () => {
    const running = await startSandbox({ testClock: true, clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }] });
    try {
      const token = running.sandbox.issueTokens(CLIENT_ID).accessToken;
      const user = (signal?: AbortSignal) =>
        fetch(`${running.url}/api/v1/auth/user`, {
          headers: { authorization: `Bearer ${token}` },
          ...(signal && { signal }),
        });
      const add = (body: unknown) =>
        fetch(`${running.url}/__sandbox/faults`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      expect((await add({ route: "/api/v1/auth/user", kind: "drop" })).status).toBe(201);
      await expect(user()).rejects.toThrow(TypeError);
      expect((await user()).status).toBe(200);

      await add({ route: "/api/v1/auth/user", kind: "slow", delayMs: 60_000 });
      await expect(user(AbortSignal.timeout(100))).rejects.toMatchObject({ name: "TimeoutError" });
      expect((await user()).status).toBe(200);

      await add({ route: "/api/v1/auth/user", kind: "status", status: 503, retryAfter: 0, count: 2 });
      expect((await fetch(`${running.url}/__sandbox/faults`).then((r) => r.json())) as unknown).toMatchObject({
        faults: [{ id: 3, remaining: 2 }],
      });
      expect((await user()).status).toBe(503);
      expect(
        (await fetch(`${running.url}/__sandbox/faults`, { method: "DELETE" }).then((r) => r.json())) as unknown,
      ).toEqual({ cleared: 1 });
      expect((await user()).status).toBe(200);
    } finally {
      await running.close();
    }
  });
});

describe("the fault route and the fault specs", () => {
  it.each([
    [{ route: "/__sandbox/clock", kind: "status" }, /__sandbox/],
    [{ route: "api/v1/auth/user", kind: "status" }, /route/],
    [{ route: "/api/v1/auth/user", kind: "explode" }, /kind/],
    [{ route: "/api/v1/auth/user", kind: "status", status: 200 }, /status/],
    [{ route: "/api/v1/auth/user", kind: "slow" }, /delayMs/],
    [{ route: "/api/v1/auth/user", kind: "drop", retryAfter: 2 }, /retryAfter/],
    [{ route: "/api/v1/auth/user", kind: "drop", count: 0 }, /count/],
    [{ route: "/api/v1/auth/user", kind: "drop", times: 2 }, /Unknown field/],
  ])("refuses %j with 400 and says why", async (spec, reason) => {
    const sandbox = testSandbox();
    const answer = await postFault(sandbox, spec);
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error_description: string }).error_description).toMatch(reason);
    expect(() => sandbox.faults.add(spec as never)).toThrow(FaultConfigError);
  });

  it("exists only with the test routes, while the in-process API always works", async () => {
    const sandbox = createSandbox({ clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }] });
    expect((await postFault(sandbox, { route: "/api/v1/auth/user", kind: "drop" })).status).toBe(404);
    sandbox.faults.add({ route: "/api/v1/auth/user", kind: "status", status: 500 });
    expect((await sandbox.fetch(USER)).status).toBe(500);
  });

  it("is given from the command line with --fault, and a bad one is a usage error", () => {
    const command = parseCommand([
      "--fault",
      "route=/oauth/token,method=POST,kind=status,status=429,retryAfter=2,count=3",
    ]);
    expect(command).toMatchObject({
      kind: "run",
      faults: [{ route: "/oauth/token", method: "POST", kind: "status", status: 429, retryAfter: 2, count: 3 }],
    });
    expect(() => parseCommand(["--fault", "route=/oauth/token,kind=status,status=abc"])).toThrow(UsageError);
    expect(() => parseCommand(["--fault", "route=/oauth/token"])).toThrow(/kind/);
  });

  it("holds the faults given at creation", async () => {
    const sandbox = createSandbox({ faults: [{ route: "/api/v1/auth/user", kind: "status", status: 503, count: 2 }] });
    expect(sandbox.faults.list()).toMatchObject([{ id: 1, remaining: 2 }]);
    expect((await sandbox.fetch(USER)).status).toBe(503);
  });
});

describe("createTestTenant with a fetch wrapper", () => {
  it("sends the token manager's and the client's requests through the wrapper", async () => {
    const sent: string[] = [];
    const wrap =
      (sandboxFetch: FetchLike): FetchLike =>
      (input, init) => {
        const request = new Request(input, init);
        sent.push(`${request.method} ${new URL(request.url).pathname}`);
        return sandboxFetch(request);
      };
    const tenant = await createTestTenant({ fetch: wrap });
    expect(sent).toEqual(["POST /oauth/token"]);
    await tenant.client.GET("/api/v1/auth/user");
    expect(sent).toEqual(["POST /oauth/token", "GET /api/v1/auth/user"]);
  });

  it("lets a test fail requests on the way, e.g. the first refresh", async () => {
    let failNextRefresh = false;
    const tenant = await createTestTenant({
      fetch: (sandboxFetch) => async (input, init) => {
        const request = new Request(input, init);
        if (failNextRefresh && request.url.endsWith("/oauth/token")) {
          failNextRefresh = false;
          throw new TypeError("fetch failed");
        }
        return sandboxFetch(request);
      },
      tokenManager: { retry: { attempts: 1 } },
    });
    failNextRefresh = true;
    tenant.advance(16 * 60);
    await expect(tenant.tokenManager.getAccessToken()).rejects.toThrow();
    expect(await tenant.tokenManager.getAccessToken()).toMatch(/\S/);
  });
});
