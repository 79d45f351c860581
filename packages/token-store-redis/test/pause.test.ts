/**
 * Issue 21, on Redis: a lock holder that pauses (SIGSTOP: a closed laptop lid, a migrated VM, a long
 * GC pause, a breakpoint) must not end everyone's session. Real processes (test/fleet/child.mjs, the
 * BUILT packages), real signals, a real redis-server, and a real sandbox tenant with strict rotation
 * (a rotated-away refresh token presented again revokes the family, RFC 9700 §4.14.2).
 *
 * The geometry of the issue (a 10 s lease, a 13 s pause) is kept at a smaller scale to bound CI time:
 * a 2 s lease, a 3 s pause, a 2 s request timeout (shorter than the pause) and a 6 s intent wait
 * (longer than the pause). The pause is a test's orchestration, never an assertion.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { ACCESS_TOKEN_LIFETIME_SECONDS, DEMO_USER, startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { redisStorage } from "../src/index.js";
import { releaseTogether, startFleet, startMember, stopFleet, type FleetEnv, type FleetMember, type FleetMessage, type FleetResult } from "./fleet/fleet.mjs";
import { uniquePrefix } from "./support/helpers.js";
import { startRedisServer } from "./support/redis-server.mjs";

const CLIENT_ID = "pause";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const LATER_MS = (ACCESS_TOKEN_LIFETIME_SECONDS + 1) * 1000;
const LEASE_MS = "2000";
const PAUSE_MS = 3_000;
const TRIALS = 2;
const OTHERS = 4;

let running: RunningSandbox;
let clockMs = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Signs in once (this process), leaving the tokens in the Redis at `url` under `prefix`. */
async function signIn(url: string, prefix: string): Promise<void> {
  const client = createClient({ url });
  client.on("error", () => {});
  await client.connect();
  try {
    const tm = createTokenManager({
      baseUrl: running.url,
      clientId: CLIENT_ID,
      redirectUri: REDIRECT_URI,
      scopes: ["profile:read"],
      storage: redisStorage(client, { prefix }),
      now: () => Date.now() + clockMs,
    });
    const { url: authorize } = await tm.beginAuthorization();
    const approved = await fetch(authorize, { redirect: "manual" });
    await tm.completeAuthorization(approved.headers.get("location") ?? "");
  } finally {
    await client.close();
  }
}

function expireAccessTokens(): number {
  running.sandbox.clock.advance(LATER_MS / 1000);
  clockMs += LATER_MS;
  return clockMs;
}

/** The refresh grants the sandbox saw after `seq`, as "ok" or "invalid_grant <detail>". */
const refreshesAfter = (seq: number): string[] =>
  running.sandbox
    .events()
    .filter((e) => e.seq > seq && e.grantType === "refresh_token")
    .map((e) => `${e.outcome}${e.detail ? ` ${e.detail}` : ""}`);
const lastSeq = (): number => running.sandbox.events().at(-1)?.seq ?? 0;

function envFor(url: string, prefix: string, extra: Partial<FleetEnv> = {}): FleetEnv {
  return {
    REDIS_URL: url,
    TENANT_URL: running.url,
    CLIENT_ID,
    REDIRECT_URI,
    PREFIX: prefix,
    CLOCK_OFFSET_MS: String(clockMs),
    LEASE_MS,
    REQUEST_TIMEOUT_MS: "2000",
    INTENT_WAIT_MS: "6000",
    ...extra,
  };
}

/** The member's next `result`, skipping its other messages (a lost lease reported). */
async function resultOf(member: FleetMember): Promise<{ result: FleetResult; messages: FleetMessage[] }> {
  const messages: FleetMessage[] = [];
  for (;;) {
    const message = await member.next();
    if (message.result) return { result: message.result, messages };
    messages.push(message);
  }
}

const worked = (r: FleetResult) => r.ok && r.userId === DEMO_USER.id;

beforeAll(async () => {
  running = await startSandbox({ port: 0, host: "127.0.0.1", clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], autoApprove: true, testClock: true });
});

afterAll(async () => {
  await running?.close();
});

describe.each([
  ["pause-intent", "intent", "after taking the lock and reading the record, before its checks and its intent"],
  ["announce", "in-flight", "with its refresh in flight: stopped from outside while it waits, the answer arriving (1.5 s, a slow sandbox fault) and its 2 s request timer expiring during the pause"],
  ["pause-in-flight", "in-flight", "with its refresh answered by the tenant, the answer unread by the manager"],
  ["pause-answered", "answered", "after the tenant's answer, before writing it"],
] as const)("the lock holder paused (%s), past its lease, while 4 other processes want a token", (victimMode, where, description) => {
  it(`keeps the session in ${TRIALS} of ${TRIALS} trials: one refresh, every process gets the user (${description})`, async () => {
    const url = inject("redisUrl");
    const prefix = uniquePrefix();
    await signIn(url, prefix);
    const others = await startFleet(OTHERS, envFor(url, prefix));
    try {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const label = `trial ${trial}`;
        const victim = startMember(envFor(url, prefix, { VICTIM: victimMode }));
        try {
          expect(await victim.next(), label).toEqual({ ready: true });
          const seq = lastSeq();
          const offset = expireAccessTokens();
          if (victimMode === "announce") {
            running.sandbox.faults.add({ route: "/oauth/token", method: "POST", kind: "slow", delayMs: 1_500 });
            victim.send({ go: offset });
            expect(await victim.next(), label).toEqual({ tokenRequest: true });
            await sleep(300);
            victim.kill("SIGSTOP");
          } else {
            victim.send({ go: offset });
            expect(await victim.next(), label).toEqual({ paused: where });
          }
          const pending = releaseTogether(others, { go: offset });
          await sleep(PAUSE_MS);
          victim.kill("SIGCONT");
          const { result } = await resultOf(victim);
          const results = await pending;
          expect([result, ...results].filter((r) => !worked(r)), label).toEqual([]);
          expect(refreshesAfter(seq), label).toEqual(["ok"]);
          // A later call works everywhere, from memory: the stored record holds the current tokens.
          const later = await releaseTogether([victim, ...others], { again: true });
          expect(later.filter((r) => !worked(r) || r.refreshed), label).toEqual([]);
          expect(refreshesAfter(seq), label).toEqual(["ok"]);
        } finally {
          await stopFleet([victim]);
        }
      }
    } finally {
      await stopFleet(others);
    }
  }, 120_000);
});

describe("the lock holder paused after the tenant's answer for longer than the intent wait (no rotation grace)", () => {
  it("ends the session, as documented: after the wait another process presents the token, the tenant revokes the family, and every process then reports the session ended", async () => {
    const url = inject("redisUrl");
    const prefix = uniquePrefix();
    await signIn(url, prefix);
    const env = envFor(url, prefix, { INTENT_WAIT_MS: "1000" });
    const others = await startFleet(OTHERS, env);
    const victim = startMember({ ...env, VICTIM: "pause-answered" });
    try {
      expect(await victim.next()).toEqual({ ready: true });
      const seq = lastSeq();
      const offset = expireAccessTokens();
      victim.send({ go: offset });
      expect(await victim.next()).toEqual({ paused: "answered" });
      const results = await releaseTogether(others, { go: offset });
      victim.kill("SIGCONT");
      const { result } = await resultOf(victim);
      expect(refreshesAfter(seq).slice(0, 2)).toEqual(["ok", "invalid_grant refresh_token_reused"]);
      expect([result, ...results].filter((r) => r.ok)).toEqual([]);
      for (const r of [result, ...results]) expect(["SESSION_ENDED", "NOT_SIGNED_IN"]).toContain(r.code);
      expect([result, ...results].some((r) => r.code === "SESSION_ENDED")).toBe(true);
      // And it stays ended until the user signs in again.
      const later = await releaseTogether([victim, ...others], { again: true });
      expect(later.map((r) => r.code)).toEqual(Array(OTHERS + 1).fill("NOT_SIGNED_IN"));
    } finally {
      await stopFleet([victim, ...others]);
    }
  }, 120_000);
});

describe("Redis persisting to an append-only file (appendfsync always), killed during a refresh and restarted", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "redis-aof-"));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("keeps the session: Redis comes back with the old record and the holder's intent; the others wait for the holder, which writes its tokens back", async () => {
    const args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", dir];
    let redis = await startRedisServer({ args });
    const prefix = uniquePrefix();
    let members: FleetMember[] = [];
    try {
      await signIn(redis.url, prefix);
      const env = envFor(redis.url, prefix);
      // The holder's commands fail at once while Redis is down, instead of queueing until it is back.
      const victim = startMember({ ...env, VICTIM: "hold-answer", NO_OFFLINE_QUEUE: "1" });
      expect(await victim.next()).toEqual({ ready: true });
      const others = await startFleet(OTHERS, env);
      members = [victim, ...others];
      const seq = lastSeq();
      const offset = expireAccessTokens();
      victim.send({ go: offset });
      // The tenant rotated the token; the holder has the answer and has not written it yet.
      expect(await victim.next()).toEqual({ tokenResponse: 200 });
      await redis.kill();
      // The holder's write fails (Redis is down); it keeps the tokens in memory and gets the user.
      victim.kill("SIGUSR2");
      const { result } = await resultOf(victim);
      expect(worked(result)).toBe(true);
      // Redis comes back from its append-only file: the old record, and the holder's intent.
      redis = await startRedisServer({ args, port: redis.port });
      const results = await releaseTogether(others, { go: offset });
      expect(results.filter((r) => !worked(r))).toEqual([]);
      expect(refreshesAfter(seq)).toEqual(["ok"]);
      const later = await releaseTogether(members, { again: true });
      expect(later.filter((r) => !worked(r) || r.refreshed)).toEqual([]);
      expect(refreshesAfter(seq)).toEqual(["ok"]);
    } finally {
      await stopFleet(members);
      await redis.stop();
    }
  }, 120_000);
});
