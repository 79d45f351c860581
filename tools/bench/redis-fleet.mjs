// The wall time for 20 processes, each with its own Redis connection and redisStorage, to all hold
// a valid token after the access token expired (released together; one of them refreshes, the
// others wait on the Redis lock and read the new tokens), next to one process alone doing the same
// refresh through Redis. Real processes (packages/token-store-redis/test/fleet/child.mjs, running
// the built packages), a real redis-server and the sandbox tenant on loopback.
import { ACCESS_TOKEN_LIFETIME_SECONDS, startSandbox } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { redisStorage } from "@tenant-integration/token-store-redis";
import { createClient } from "redis";
import { releaseTogether, startFleet, stopFleet } from "../../packages/token-store-redis/test/fleet/fleet.mjs";
import { findRedisServer, startRedisServer } from "../../packages/token-store-redis/test/support/redis-server.mjs";

const FLEET = 20;
const ROUNDS = 5;
const CLIENT_ID = "bench-fleet";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function redisFleet() {
  const metric = `${FLEET} processes sharing Redis all hold a token after expiry`;
  const server = findRedisServer();
  if (!server) return [{ metric, value: "left out: redis-server is not installed", goal: "1 refresh per expiry", met: null }];

  const redis = await startRedisServer({ command: server.command });
  const tenant = await startSandbox({ port: 0, host: "127.0.0.1", clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], autoApprove: true, testClock: true });
  const client = createClient({ url: redis.url });
  client.on("error", () => {});
  await client.connect();
  let offsetMs = 0;
  const fleets = [];
  try {
    /** A signed-in session under its own prefix, and `size` warmed-up processes on it. */
    const fleetOf = async (size, prefix) => {
      const tm = createTokenManager({
        baseUrl: tenant.url,
        clientId: CLIENT_ID,
        redirectUri: REDIRECT_URI,
        scopes: ["profile:read"],
        storage: redisStorage(client, { prefix }),
        now: () => Date.now() + offsetMs,
      });
      const { url } = await tm.beginAuthorization();
      await tm.completeAuthorization((await fetch(url, { redirect: "manual" })).headers.get("location") ?? "");
      const env = { REDIS_URL: redis.url, TENANT_URL: tenant.url, CLIENT_ID, REDIRECT_URI, PREFIX: prefix, CLOCK_OFFSET_MS: String(offsetMs) };
      const members = await startFleet(size, env);
      fleets.push(members);
      return members;
    };
    const many = await fleetOf(FLEET, "bench-many:");
    const one = await fleetOf(1, "bench-one:");

    const walls = { many: [], one: [] };
    const refreshCounts = [];
    for (let round = 0; round < ROUNDS; round++) {
      tenant.sandbox.clock.advance(ACCESS_TOKEN_LIFETIME_SECONDS + 1);
      offsetMs += (ACCESS_TOKEN_LIFETIME_SECONDS + 1) * 1000;
      for (const [name, members] of [["many", many], ["one", one]]) {
        const before = tenant.sandbox.events().length;
        const start = performance.now();
        const results = await releaseTogether(members, { go: offsetMs });
        walls[name].push(performance.now() - start);
        if (results.some((r) => !r.ok)) throw new Error(`a process of the ${name} fleet did not get a token: ${JSON.stringify(results.find((r) => !r.ok))}`);
        if (name === "many") refreshCounts.push(tenant.sandbox.events().slice(before).filter((e) => e.grantType === "refresh_token").length);
      }
    }
    const oneRefreshEach = refreshCounts.every((n) => n === 1);
    return [
      {
        metric,
        value: `${median(walls.many).toFixed(0)} ms wall (median of ${ROUNDS}; refreshes per expiry: ${refreshCounts.join(", ")}); one process alone: ${median(walls.one).toFixed(0)} ms`,
        goal: "1 refresh per expiry",
        met: oneRefreshEach,
      },
    ];
  } finally {
    for (const members of fleets) await stopFleet(members);
    await client.close();
    await tenant.close();
    await redis.stop();
  }
}

// `node tools/bench/redis-fleet.mjs` prints the row alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await redisFleet());
