/**
 * THE promise of this package, shown with real processes: 30 Node processes, each with its own
 * Redis connection, `redisStorage` and token manager from the BUILT packages (test/fleet/child.mjs),
 * released at the same instant after the access token expired, against a real sandbox tenant that
 * rotates refresh tokens and revokes the family on reuse. Every trial must make exactly one refresh,
 * every process must get the user, and a later call must still work. Then the lock holder is killed
 * with `kill -9` in the middle of a refresh, and frozen with SIGSTOP past its lease (the three pause
 * points of issue 21 are in test/pause.test.ts).
 *
 * The processes are started once and serve every trial (a fleet whose tokens expire again and
 * again), because starting 30 Node processes costs seconds of CPU on a 2-core CI machine; each
 * trial moves the sandbox's clock and the processes' clocks past the 15-minute access token.
 */
import { statSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { ACCESS_TOKEN_LIFETIME_SECONDS, DEMO_USER, startSandbox, type RunningSandbox, type SandboxEvent } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { redisStorage } from "../src/index.js";
import { releaseTogether, startFleet, startMember, stopFleet, type FleetEnv, type FleetMember, type FleetResult } from "./fleet/fleet.mjs";
import { uniquePrefix } from "./support/helpers.js";

const FLEET_SIZE = 30;
const TRIALS = 20;
const CLIENT_ID = "fleet";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const LATER_MS = (ACCESS_TOKEN_LIFETIME_SECONDS + 1) * 1000;

/** The children run dist/: refuse a missing or stale build rather than test old code. */
function assertBuilt(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const newest = (dir: string): number =>
    Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs)));
  let built = 0;
  try {
    built = statSync(join(root, "dist", "index.js")).mtimeMs;
  } catch {}
  if (built < newest(join(root, "src"))) throw new Error("packages/token-store-redis/dist is missing or older than src/: run `pnpm build` first.");
}

let running: RunningSandbox;
let clockMs = 0;
const redisClient = createClient({ url: inject("redisUrl") });

/** Signs in once (this process), leaving the tokens in Redis under `prefix`. */
async function signIn(prefix: string): Promise<void> {
  const tm = createTokenManager({
    baseUrl: running.url,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scopes: ["profile:read"],
    storage: redisStorage(redisClient, { prefix }),
    now: () => Date.now() + clockMs,
  });
  const { url } = await tm.beginAuthorization();
  const approved = await fetch(url, { redirect: "manual" });
  await tm.completeAuthorization(approved.headers.get("location") ?? "");
}

/** Moves the tenant and the fleet's clocks past the access token's lifetime; returns the new offset. */
function expireAccessTokens(): number {
  running.sandbox.clock.advance(LATER_MS / 1000);
  clockMs += LATER_MS;
  return clockMs;
}

/** The refresh grants the sandbox saw after `seq`, as outcomes ("ok", "invalid_grant"). */
function refreshesAfter(seq: number): SandboxEvent[] {
  return running.sandbox.events().filter((e) => e.seq > seq && e.grantType === "refresh_token");
}
const lastSeq = (): number => running.sandbox.events().at(-1)?.seq ?? 0;

function envFor(prefix: string, extra: Partial<FleetEnv> = {}): FleetEnv {
  return { REDIS_URL: inject("redisUrl"), TENANT_URL: running.url, CLIENT_ID, REDIRECT_URI, PREFIX: prefix, CLOCK_OFFSET_MS: String(clockMs), ...extra };
}

beforeAll(async () => {
  assertBuilt();
  redisClient.on("error", () => {});
  await redisClient.connect();
  running = await startSandbox({ port: 0, host: "127.0.0.1", clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], autoApprove: true, testClock: true });
});

afterAll(async () => {
  await running?.close();
  await redisClient.close();
});

describe(`a fleet of ${FLEET_SIZE} processes sharing Redis`, () => {
  let fleet: FleetMember[] = [];
  afterAll(() => stopFleet(fleet));

  it(`makes exactly one refresh per expiry, and every process gets the user (${TRIALS} trials)`, async () => {
    const prefix = uniquePrefix();
    await signIn(prefix);
    fleet = await startFleet(FLEET_SIZE, envFor(prefix));
    for (let trial = 1; trial <= TRIALS; trial++) {
      const seq = lastSeq();
      const offset = expireAccessTokens();
      const results = await releaseTogether(fleet, { go: offset });
      const label = `trial ${trial}`;
      expect(results.filter((r) => !(r.ok && r.userId === DEMO_USER.id)), label).toEqual([]);
      expect(refreshesAfter(seq).map((e) => e.outcome), label).toEqual(["ok"]);
      expect(results.filter((r) => r.refreshed).length, label).toBe(1);
      // A later call still works, from memory: no further refresh.
      const later = await releaseTogether(fleet, { again: true });
      expect(later.filter((r) => !(r.ok && r.userId === DEMO_USER.id && !r.refreshed)), label).toEqual([]);
      expect(refreshesAfter(seq).length, label).toBe(1);
    }
  }, 600_000);
});

describe("the lock holder killed (kill -9) or frozen (SIGSTOP) in the middle of a refresh", () => {
  const LEASE_MS = 2_000;
  const SURVIVORS = 9;

  /** Signs in, warms up a victim and the survivors, expires the tokens, lets the victim take the lock and stop at `stage`, kills it. */
  async function killHolder(stage: "before" | "after") {
    const prefix = uniquePrefix();
    await signIn(prefix);
    const victim = startMember(envFor(prefix, { VICTIM: stage, LEASE_MS: String(LEASE_MS) }));
    let survivors: FleetMember[] = [];
    try {
      expect(await victim.next()).toEqual({ ready: true });
      survivors = await startFleet(SURVIVORS, envFor(prefix, { LEASE_MS: String(LEASE_MS) }));
      const seq = lastSeq();
      const offset = expireAccessTokens();
      victim.send({ go: offset });
      // The victim holds the lock and has begun its refresh (request not sent / answered but unseen).
      expect(await victim.next()).toEqual({ tokenRequest: true });
      if (stage === "after") expect(await victim.next()).toEqual({ tokenResponse: 200 });
      const pending = releaseTogether(survivors, { go: offset });
      victim.kill("SIGKILL");
      expect(await victim.exited).toMatchObject({ signal: "SIGKILL" });
      const results = await pending;
      return { results, refreshes: refreshesAfter(seq), later: await releaseTogether(survivors, { again: true }) };
    } finally {
      victim.kill();
      await stopFleet(survivors);
    }
  }

  it("killed before its request reached the tenant: another process takes over after the lease, one refresh, the session survives", async () => {
    const { results, refreshes, later } = await killHolder("before");
    expect(results.filter((r: FleetResult) => !(r.ok && r.userId === DEMO_USER.id))).toEqual([]);
    expect(results.filter((r: FleetResult) => r.refreshed).length).toBe(1);
    expect(refreshes.map((e) => e.outcome)).toEqual(["ok"]);
    expect(later.every((r: FleetResult) => r.ok && !r.refreshed)).toBe(true);
  }, 120_000);

  it("killed after the tenant rotated the token but before it was stored: the reuse ends the session, reported cleanly everywhere", async () => {
    const { results, refreshes, later } = await killHolder("after");
    // The victim's refresh succeeded on the tenant; the taker-over presented the rotated-away token,
    // the tenant revoked the family (RFC 9700 §4.14.2), and that process ended the session.
    expect(refreshes.map((e) => `${e.outcome}${e.detail ? ` ${e.detail}` : ""}`)).toEqual(["ok", "invalid_grant refresh_token_reused"]);
    const codes = results.map((r: FleetResult) => r.code).sort();
    expect(codes).toEqual([...Array(SURVIVORS - 1).fill("NOT_SIGNED_IN"), "SESSION_ENDED"]); // sorted
    expect(results.some((r: FleetResult) => r.ok)).toBe(false);
    // And it stays ended (no token handed out, no further request) until the user signs in again.
    expect(later.map((r: FleetResult) => r.code)).toEqual(Array(SURVIVORS).fill("NOT_SIGNED_IN"));
  }, 120_000);

  it("frozen past its lease just before its request leaves (after its last checks): the others honour its refresh intent, it sends on waking, one refresh, the session is kept, and the lost lease is reported", async () => {
    const prefix = uniquePrefix();
    await signIn(prefix);
    const env = envFor(prefix, { LEASE_MS: String(LEASE_MS), INTENT_WAIT_MS: "6000" });
    const victim = startMember({ ...env, VICTIM: "pause" });
    let others: FleetMember[] = [];
    try {
      expect(await victim.next()).toEqual({ ready: true });
      others = await startFleet(4, env);
      const seq = lastSeq();
      const offset = expireAccessTokens();
      victim.send({ go: offset });
      // It holds the lock and froze itself (SIGSTOP) just before sending its refresh: no renewal runs.
      expect(await victim.next()).toEqual({ tokenRequest: true });
      const pending = releaseTogether(others, { go: offset });
      // Past its lease: another process takes the lock, finds the intent on the token, and waits.
      await new Promise((r) => setTimeout(r, LEASE_MS + 1_000));
      victim.kill("SIGCONT");
      const results = await pending;
      expect(results.filter((r) => !(r.ok && r.userId === DEMO_USER.id))).toEqual([]);
      const messages = [await victim.next(), await victim.next()];
      // Its release found the lock no longer its own; its refresh was the one.
      expect(messages[0]).toEqual({ leaseLost: "LEASE_LOST" });
      expect(messages[1]!.result).toMatchObject({ ok: true, refreshed: true });
      expect(refreshesAfter(seq).map((e) => e.outcome)).toEqual(["ok"]);
      const later = await releaseTogether(others, { again: true });
      expect(later.filter((r) => !(r.ok && r.userId === DEMO_USER.id))).toEqual([]);
    } finally {
      victim.kill();
      await stopFleet(others);
    }
  }, 120_000);
});
