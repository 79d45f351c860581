/**
 * The fleet's promise, one refresh per expiry, with clocks that disagree: 12 Node processes on one
 * Redis (test/fleet/child.mjs, the BUILT packages), each clock the tenant's plus its own skew of up to
 * 200 ms either way, released together after each expiry against a real sandbox that rotates refresh
 * tokens.
 *
 * Regression guard for issue 20: a process whose clock was behind the refresher's saw the stored
 * record "received in the future", treated it as expired and refreshed again (0–200 ms of skew made
 * 1–4 refreshes per expiry). A record stamped in this clock's future now counts as received now.
 */
import { ACCESS_TOKEN_LIFETIME_SECONDS, DEMO_USER, startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { redisStorage } from "../src/index.js";
import { startFleet, stopFleet, type FleetMember, type FleetResult } from "./fleet/fleet.mjs";
import { uniquePrefix } from "./support/helpers.js";

const CLIENT_ID = "skewed-fleet";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const LATER_MS = (ACCESS_TOKEN_LIFETIME_SECONDS + 1) * 1000;
/** Each member's clock against the tenant's, in ms: as far as 200 ms behind or ahead. */
const SKEWS_MS = [0, -1, -5, -20, -60, -120, -200, 3, 40, 90, 150, 200];
const EXPIRIES = 8;

let running: RunningSandbox;
let fleet: FleetMember[] = [];
let clockMs = 0;
const redisClient = createClient({ url: inject("redisUrl") });

beforeAll(async () => {
  redisClient.on("error", () => {});
  await redisClient.connect();
  running = await startSandbox({ port: 0, host: "127.0.0.1", clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], autoApprove: true, testClock: true });
  const prefix = uniquePrefix();
  const tm = createTokenManager({ baseUrl: running.url, clientId: CLIENT_ID, redirectUri: REDIRECT_URI, scopes: ["profile:read"], storage: redisStorage(redisClient, { prefix }) });
  const { url } = await tm.beginAuthorization();
  await tm.completeAuthorization((await fetch(url, { redirect: "manual" })).headers.get("location") ?? "");
  fleet = await startFleet(SKEWS_MS.length, { REDIS_URL: inject("redisUrl"), TENANT_URL: running.url, CLIENT_ID, REDIRECT_URI, PREFIX: prefix });
}, 120_000);

afterAll(async () => {
  await stopFleet(fleet);
  await running?.close();
  await redisClient.close();
});

const lastSeq = (): number => running.sandbox.events().at(-1)?.seq ?? 0;
const refreshesAfter = (seq: number): string[] =>
  running.sandbox
    .events()
    .filter((e) => e.seq > seq && e.grantType === "refresh_token")
    .map((e) => e.outcome);

/** Sends every member its own clock (the tenant's plus its skew) back to back, then collects the results. */
async function releaseSkewed(members: readonly FleetMember[]): Promise<FleetResult[]> {
  members.forEach((m, i) => m.send({ go: clockMs + SKEWS_MS[i]! }));
  return Promise.all(members.map(async (m) => (await m.next()).result!));
}

describe(`a fleet of ${SKEWS_MS.length} processes on Redis, clocks up to 200 ms behind or ahead`, () => {
  it(`makes exactly one refresh per expiry (${EXPIRIES} expiries), and every process gets the user`, async () => {
    for (let expiry = 1; expiry <= EXPIRIES; expiry++) {
      const seq = lastSeq();
      running.sandbox.clock.advance(LATER_MS / 1000);
      clockMs += LATER_MS;
      const results = await releaseSkewed(fleet);
      expect({
        expiry,
        failed: results.filter((r) => !(r.ok && r.userId === DEMO_USER.id)),
        refreshes: refreshesAfter(seq),
        refreshedBy: results.filter((r) => r.refreshed).length,
      }).toEqual({ expiry, failed: [], refreshes: ["ok"], refreshedBy: 1 });
    }
  }, 300_000);
});
