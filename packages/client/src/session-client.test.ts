import { describe, expect, it } from "vitest";
import type { AccessTokenSource } from "./access-token-source.js";
import { sessionClient, type SessionSource } from "./session-client.js";
import { fakeFetch, json } from "./test-support/fake-fetch.js";

const baseUrl = "https://acme.tenant.example";

/** A sessions object of plain strategies: each session's token names it; `drop` forgets a session's manager. */
function sessionsOf(): SessionSource & { drop(id: string): void; rejected: string[] } {
  const managers = new Map<string, AccessTokenSource>();
  const rejected: string[] = [];
  return {
    baseUrl,
    rejected,
    manager(id) {
      if (id.includes(":")) throw new Error("INVALID_SESSION_ID");
      let m = managers.get(id);
      if (!m) {
        let n = 0;
        m = {
          getAccessToken: async () => `at_${id}_${n}`,
          onUnauthorized: (t) => void (rejected.push(t), n++),
        };
        managers.set(id, m);
      }
      return m;
    },
    drop: (id) => void managers.delete(id),
  };
}

describe("sessionClient", () => {
  it("sends each session's own token, from the sessions' base URL", async () => {
    const fetch = fakeFetch(json(200, { id: 1 }));
    const sessions = sessionsOf();
    const options = { fetch };
    await sessionClient(sessions, "ada", options).GET("/api/v1/auth/user");
    await sessionClient(sessions, "bob", options).GET("/api/v1/auth/user");
    expect(fetch.calls.map((c) => [c.url, c.headers.get("authorization")])).toEqual([
      [`${baseUrl}/api/v1/auth/user`, "Bearer at_ada_0"],
      [`${baseUrl}/api/v1/auth/user`, "Bearer at_bob_0"],
    ]);
  });

  it("shares one openapi-fetch client, and its middleware, among the sessions' clients of one options object", async () => {
    const fetch = fakeFetch(json(200, {}), json(200, {}), json(200, {}));
    const sessions = sessionsOf();
    const seen: string[] = [];
    const options = {
      fetch,
      middleware: [{ onRequest: ({ request }: { request: Request }) => void seen.push(request.url) }],
    };
    await sessionClient(sessions, "ada", options).GET("/api/v1/auth/user");
    await sessionClient(sessions, "bob", options).GET("/api/v1/auth/user");
    await sessionClient(sessions, "ada", options).GET("/api/v1/auth/user");
    expect(seen).toHaveLength(3);
    expect(fetch.calls.map((c) => c.headers.get("authorization"))).toEqual([
      "Bearer at_ada_0",
      "Bearer at_bob_0",
      "Bearer at_ada_0",
    ]);
  });

  it("refuses use and eject, which would reach every session's client", () => {
    const client = sessionClient(sessionsOf(), "ada", { fetch: fakeFetch() });
    const middleware = { onRequest: () => undefined };
    expect(() => client.use(middleware)).toThrow(/every session's client/);
    expect(() => client.eject(middleware)).toThrow(/every session's client/);
    expect(() => client.raw.use(middleware)).toThrow(/every session's client/);
  });

  it("asks the sessions for the manager at every request, so a client kept past a drop goes on working", async () => {
    const fetch = fakeFetch(json(401, {}), json(200, {}));
    const sessions = sessionsOf();
    const ada = sessionClient(sessions, "ada", { fetch });
    sessions.drop("ada");
    const { response } = await ada.GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(sessions.rejected).toEqual(["at_ada_0"]);
    expect(fetch.calls.map((c) => c.headers.get("authorization"))).toEqual(["Bearer at_ada_0", "Bearer at_ada_1"]);
  });

  it("passes on what the sessions throw for an invalid id", () => {
    expect(() => sessionClient(sessionsOf(), "a:b")).toThrow("INVALID_SESSION_ID");
  });
});
