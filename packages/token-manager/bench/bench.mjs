// Measures the built package (run `pnpm build` first): the browser bundle size of everything the
// package exports, getAccessToken() calls per second on a fresh token, and the wall time of a refresh
// shared by 1,000 concurrent callers. Prints the figures beside the goals; never fails on them.
import { build } from "esbuild";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));
if (!existsSync(dist)) {
  console.error("dist/ is missing: run `pnpm build` first.");
  process.exit(1);
}
const { createTokenManager, memoryStorage } = await import(dist);

const GOAL_CALLS = 1_000_000;

// 1. Bundle size: everything the package exports, minified for the browser, then gzipped.
const bundle = await build({
  stdin: { contents: `export * from ${JSON.stringify(dist)};`, resolveDir: process.cwd() },
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  write: false,
  logLevel: "silent",
});
const bytes = bundle.outputFiles[0].contents;
const gzip = gzipSync(bytes, { level: 9 }).length;

// A signed-in manager on an in-memory token endpoint and a hand-driven clock.
async function signedIn() {
  let n = 0;
  let requests = 0;
  let t = 1_700_000_000_000;
  const fetch = async () => {
    requests++;
    n++;
    return new Response(
      JSON.stringify({ access_token: `at_${n}`, refresh_token: `rt_${n}`, token_type: "Bearer", expires_in: 900 }),
      {
        status: 200,
      },
    );
  };
  const redirectUri = "http://127.0.0.1:53682/callback";
  const tm = createTokenManager({
    baseUrl: "https://acme.tenant.test",
    clientId: "bench",
    redirectUri,
    scopes: ["profile:read"],
    storage: memoryStorage(),
    fetch,
    now: () => t,
  });
  const { url } = await tm.beginAuthorization();
  await tm.completeAuthorization(`${redirectUri}?code=c&state=${new URL(url).searchParams.get("state")}`);
  return { tm, advance: (ms) => (t += ms), requests: () => requests };
}

// 2. Fresh path: sequential awaited calls for about one second, after a warm-up.
const fresh = await signedIn();
for (let i = 0; i < 200_000; i++) await fresh.tm.getAccessToken();
let calls = 0;
const started = performance.now();
let elapsed = 0;
while (elapsed < 1000) {
  for (let i = 0; i < 100_000; i++) await fresh.tm.getAccessToken();
  calls += 100_000;
  elapsed = performance.now() - started;
}
const perSecond = Math.round((calls / elapsed) * 1000);

// 3. 1,000 concurrent callers on an expired token: one refresh, everyone gets the new token.
const expired = await signedIn();
expired.advance(900_000);
const before = expired.requests();
const t0 = performance.now();
const tokens = await Promise.all(Array.from({ length: 1000 }, () => expired.tm.getAccessToken()));
const wall = performance.now() - t0;
const refreshRequests = expired.requests() - before;

const mark = (ok) => (ok ? "meets the goal" : "MISSES the goal");
console.log("@tenant-integration/token-manager bench (built dist/, Node " + process.version + ")");
// No absolute size goal: the kit's goal is relative, a typical app against openapi-fetch + oauth4webapi
// (tools/bench/sizes.mjs, in `pnpm bench`).
console.log(
  `bundle (browser, everything exported): ${bytes.length} B minified, ${gzip} B gzipped (${(gzip / 1024).toFixed(2)} kB)`,
);
console.log(
  `getAccessToken() on a fresh token: ${perSecond.toLocaleString("en-US")} calls/s (goal ≥ 1,000,000: ${mark(perSecond >= GOAL_CALLS)})`,
);
console.log(
  `1,000 concurrent callers on an expired token: ${wall.toFixed(2)} ms wall time, ${refreshRequests} refresh request(s), ` +
    `${new Set(tokens).size} distinct token(s) handed out`,
);
