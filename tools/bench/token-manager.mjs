// getAccessToken() on a fresh token (calls per second) with the default clock (issue 28: a constant
// `now` made it 14.63 M calls/s where the default clock gives about 6), and the wall time of one
// refresh shared by 1,000 concurrent callers on an expired token (there a test clock moves past the
// expiry). Token endpoint: an in-memory stub fetch. `node token-manager.mjs [--quick]` prints the rows.
import { fileURLToPath } from "node:url";
import { createTokenManager, memoryStorage } from "@tenant-integration/token-manager";
import { rowLine } from "./report.mjs";
import { QUICK, judgedRow, spread } from "./stats.mjs";

const REDIRECT = "http://127.0.0.1:53682/callback";

/** A signed-in manager; `clock: "test"` gives it a clock the caller moves, else the default clock. */
async function signedIn({ clock } = { clock: "test" }) {
  let n = 0;
  let refreshes = 0;
  let time = 1_700_000_000_000;
  const fetch = async (input) => {
    const url = typeof input === "string" ? input : input.url;
    if (url.endsWith("/oauth/token")) {
      n++;
      if (n > 1) refreshes++;
      return new Response(
        JSON.stringify({ access_token: `at_${n}`, refresh_token: `rt_${n}`, token_type: "Bearer", expires_in: 900 }),
        {
          status: 200,
          headers: { "content-type": "application/json" },
        },
      );
    }
    return new Response(null, { status: 404 });
  };
  const manager = createTokenManager({
    baseUrl: "https://acme.tenant.test",
    clientId: "bench",
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage: memoryStorage(),
    fetch,
    ...(clock === "test" ? { now: () => time } : {}),
  });
  const { url } = await manager.beginAuthorization();
  const state = new URL(url).searchParams.get("state");
  await manager.completeAuthorization(`${REDIRECT}?code=bench&state=${state}`);
  return { manager, advance: (ms) => (time += ms), refreshes: () => refreshes };
}

/** How the rows were measured, for BENCHMARKS.md. */
export const tokenManagerMethod = `getAccessToken(): one manager as the README shows it (memory storage, the default clock \`Date.now\`), signed in through a stub token endpoint; 100,000 calls of warm-up, then 5 rounds of 1,000,000 awaited calls one after the other; the median round, with the middle half and range (a rate, not a comparison: no A/A; the goal of 1 M calls/s is met when the middle half of the rounds lies above it). The 1,000 callers: a fresh manager per round whose test clock moves 16 minutes past sign-in, 1,000 getAccessToken() started together; the median wall time of 5 rounds and the refreshes the stub answered. Rerun: \`node tools/bench/token-manager.mjs\`.`;

export async function tokenManagerSpeed() {
  const { manager } = await signedIn({ clock: "default" });
  for (let i = 0; i < 100_000; i++) await manager.getAccessToken();
  const calls = QUICK ? 200_000 : 1_000_000;
  const speeds = [];
  for (let r = 0; r < (QUICK ? 3 : 5); r++) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) await manager.getAccessToken();
    speeds.push(calls / ((performance.now() - start) / 1000));
  }
  const rate = spread(speeds);
  const m = (x) => (x / 1e6).toFixed(2);

  const walls = [];
  let requests = 0;
  for (let r = 0; r < 5; r++) {
    const s = await signedIn();
    s.advance(16 * 60 * 1000);
    const t0 = performance.now();
    const tokens = await Promise.all(Array.from({ length: 1000 }, () => s.manager.getAccessToken()));
    walls.push(performance.now() - t0);
    requests = s.refreshes();
    if (new Set(tokens).size !== 1) throw new Error("the 1,000 callers did not all get the same token");
  }
  walls.sort((a, b) => a - b);
  return [
    // A rate, not a comparison: no A/A applies; the middle half of the rounds must lie above the goal
    judgedRow({
      metric: "getAccessToken() on a fresh token, default clock",
      value: `${m(rate.median)} M calls/s (median of ${speeds.length} rounds of ${calls.toLocaleString("en")} calls; middle half ${m(rate.q1)}–${m(rate.q3)}, all ${m(rate.min)}–${m(rate.max)})`,
      c: rate,
      aa: null,
      goal: { atLeast: 1e6 },
      goalText: "≥ 1 M calls/s",
    }),
    {
      metric: "1,000 concurrent getAccessToken() on an expired token",
      value: `${walls[2].toFixed(2)} ms wall (median of 5), ${requests} refresh request`,
      goal: "1 request",
      met: requests === 1,
      exact: true,
    },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await tokenManagerSpeed()) console.log(rowLine(row));
}
