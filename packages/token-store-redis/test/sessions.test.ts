/**
 * Many sessions on one real redis-server (issue 39): each session's keys in its own hash tag,
 * pending sign-ins by state with a TTL, taken once across processes (GETDEL, or its script on a
 * server without it), and each session served only its own user's tokens.
 */
import { createSessions } from "@tenant-integration/token-manager";
import { describe, expect, it } from "vitest";
import { redisStorage } from "../src/index.js";
import type { RedisClientLike } from "../src/client.js";
import { connect, counting, inProcessSandbox, uniquePrefix } from "./support/helpers.js";

const REDIRECT = "http://127.0.0.1:53682/callback";

function sessionsOn(storage: ReturnType<typeof redisStorage>, sandbox: ReturnType<typeof inProcessSandbox>) {
  return createSessions({
    baseUrl: "http://127.0.0.1:4020",
    clientId: "fleet-demo",
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage,
    fetch: sandbox.fetch,
  });
}

/** The sandbox's redirect for a begun sign-in, approved as `user`. */
async function approve(sandbox: ReturnType<typeof inProcessSandbox>, url: string, user: string): Promise<string> {
  const approved = await sandbox.fetch(`${url}&sandbox_user=${user}`, { redirect: "manual" });
  return approved.headers.get("location") ?? "";
}

/** The user the tenant answers for a token. */
async function userOf(sandbox: ReturnType<typeof inProcessSandbox>, token: string): Promise<unknown> {
  const answer = await sandbox.fetch("http://127.0.0.1:4020/api/v1/auth/user", {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await answer.json()) as { id?: unknown }).id;
}

describe("sessions on Redis", () => {
  it("sign two users in at once through two processes' sessions, each served only its own user", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const web = sessionsOn(redisStorage(client, { prefix }), sandbox);
    const worker = sessionsOn(redisStorage(await connect(), { prefix }), sandbox);
    const ada = await web.beginSignIn({ session: "ada" });
    const bob = await web.beginSignIn({ session: "bob" });
    // Pending sign-ins: one key each, with the pending lifetime as TTL.
    const pending = await client.keys(`${prefix}*:pending:*`);
    expect(pending).toHaveLength(2);
    for (const key of pending) expect(await client.pTTL(key)).toBeGreaterThan(590_000);
    // Completed in reverse order, by another process than the one that began them.
    await worker.completeSignIn(await approve(sandbox, bob.url, "43"), { browser: bob.browser });
    await worker.completeSignIn(await approve(sandbox, ada.url, "42"), { browser: ada.browser });
    expect((await client.keys(`${prefix}*`)).sort()).toEqual([
      `${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo:ada}:tokens`,
      `${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo:bob}:tokens`,
    ]);
    expect(await userOf(sandbox, await web.manager("ada").getAccessToken())).toBe(42);
    expect(await userOf(sandbox, await web.manager("bob").getAccessToken())).toBe(43);
  });

  it("take a pending sign-in once, however many callbacks of its state arrive at once in several processes", async () => {
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const processes = await Promise.all(
      [1, 2, 3, 4].map(async () => sessionsOn(redisStorage(await connect(), { prefix }), sandbox)),
    );
    const begun = await processes[0]!.beginSignIn({ session: "ada" });
    const callback = await approve(sandbox, begun.url, "42");
    const outcomes = await Promise.all(
      processes.map((p) =>
        p.completeSignIn(callback, { browser: begun.browser }).then(
          () => "signed in",
          (e: { code: string }) => e.code,
        ),
      ),
    );
    expect(outcomes.sort()).toEqual(["NO_PENDING_SIGN_IN", "NO_PENDING_SIGN_IN", "NO_PENDING_SIGN_IN", "signed in"]);
  });

  it("take with a script on a server without GETDEL (before Redis 6.2)", async () => {
    const client = await connect();
    const traced = counting(client);
    const old: RedisClientLike = {
      sendCommand(args, options) {
        if (args[0] === "GETDEL") return Promise.reject(new Error("ERR unknown command 'GETDEL'"));
        return traced.sendCommand(args, options);
      },
    };
    const storage = redisStorage(old, { prefix: uniquePrefix() });
    const name = "tenant-integration:https://acme.tenant.test:demo:pending:0f007385b6f9d4b7eeb2748605afe1a9";
    await storage.setExpiring!(name, "record", 60_000);
    expect(await storage.take!(name)).toBe("record");
    expect(await storage.take!(name)).toBeNull();
    expect(traced.commands.filter((c) => c.startsWith("EVAL")).length).toBeGreaterThan(0);
  });
});
