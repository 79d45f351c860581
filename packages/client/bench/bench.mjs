// Bench of @tenant-integration/client. Run `pnpm build` first (it reads dist/).
//
// 1. Per-call overhead of the tenant client (staticToken, default middleware) over bare
//    openapi-fetch, both with the same stub fetch, in three variants: bare as is, bare sending
//    the same `Authorization` header per call (what the tenant client adds), and that plus a
//    timeout signal per call (what a `timeout` costs by itself, set on a second tenant client). Rounds of all
//    contenders are interleaved (drift hits each alike); the median round counts. Each round is
//    timed twice: wall clock, and this process's CPU time, which other jobs on a shared machine
//    disturb much less (on an idle machine the two agree: the loop never waits). The spread
//    (min-max of the per-round overhead) shows the noise. Goal: at most 10 %.
// 2. Browser bundle size (esbuild, minified, gzip -9) of everything the main entry exports, with
//    openapi-fetch, and with the token manager. The size goal is judged on a typical app against
//    openapi-fetch + oauth4webapi, in the root `pnpm bench` (tools/bench/sizes.mjs).
// Figures are printed with their goals; the script never fails on them.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import createClient from "openapi-fetch";
import { createTenantClient, staticToken, timeoutAfter } from "../dist/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const baseUrl = "https://acme.tenant.example";
const TOKEN = "at_2YotnFZFEjr1zCsicMWpAA";
const body = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org" });
const headers = { "content-type": "application/json" };
const stub = async () => new Response(body, { status: 200, headers });

const WARMUP = 5_000;
const CALLS = Number(process.env.BENCH_CALLS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);

const bare = createClient({ baseUrl, fetch: stub });
const auth = { Authorization: `Bearer ${TOKEN}` };
// context: what openapi-fetch itself charges once any middleware is registered (request id, options object, hook loops)
const withEmptyMiddleware = createClient({ baseUrl, fetch: stub });
withEmptyMiddleware.use({ onRequest() {} });
const tenant = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch: stub });
const tenantTimeout = createTenantClient({
  baseUrl,
  auth: staticToken(TOKEN),
  fetch: stub,
  timeout: timeoutAfter(30_000),
});

/**
 * Bare, with the header and what a timeout costs on its own: an AbortController, a timer, and a
 * Request that carries a signal (undici links it to a signal of its own, the largest part). The
 * tenant client does this for every call when it is given a `timeout` (it has none by default).
 */
function bareAuthTimeout() {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  return bare.GET("/api/v1/auth/user", { headers: auth, signal: controller.signal }).finally(() => clearTimeout(timer));
}

const contenders = {
  bare: () => bare.GET("/api/v1/auth/user"),
  bareAuth: () => bare.GET("/api/v1/auth/user", { headers: auth }),
  bareAuthTimeout,
  empty: () => withEmptyMiddleware.GET("/api/v1/auth/user"),
  tenant: () => tenant.GET("/api/v1/auth/user"),
  tenantTimeout: () => tenantTimeout.GET("/api/v1/auth/user"),
};

async function round(run, calls) {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) await run();
  const used = process.cpuUsage(cpu);
  return { wall: ((performance.now() - wall) * 1000) / calls, cpu: (used.user + used.system) / calls }; // µs per call
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (a, b) => ((a - b) / b) * 100;

for (const run of Object.values(contenders)) await round(run, WARMUP);
const rounds = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of Object.entries(contenders)) rounds[name].push(await round(run, CALLS));
}

console.log(
  `Per-call overhead (GET /api/v1/auth/user, stub fetch; median of ${ROUNDS} interleaved rounds x ${CALLS} calls)`,
);
for (const clock of ["cpu", "wall"]) {
  const m = (name) => median(rounds[name].map((x) => x[clock]));
  const spread = (name, against) => {
    const per = rounds[name].map((x, i) => pct(x[clock], rounds[against][i][clock])).sort((a, b) => a - b);
    return `${per[0].toFixed(0)}..${per[per.length - 1].toFixed(0)} %`;
  };
  console.log(`  ${clock === "cpu" ? "CPU time (primary on a shared machine)" : "wall clock"}:`);
  console.log(`    bare openapi-fetch                     : ${m("bare").toFixed(2)} µs/call`);
  console.log(`    bare + Authorization header per call   : ${m("bareAuth").toFixed(2)} µs/call`);
  console.log(
    `    bare + header + a timeout signal       : ${m("bareAuthTimeout").toFixed(2)} µs/call (${pct(m("bareAuthTimeout"), m("bareAuth")).toFixed(1)} % over bare + header)`,
  );
  console.log(
    `    openapi-fetch + 1 empty middleware     : ${m("empty").toFixed(2)} µs/call (${pct(m("empty"), m("bare")).toFixed(1)} % over bare)`,
  );
  console.log(`    tenant client                          : ${m("tenant").toFixed(2)} µs/call`);
  console.log(`    tenant client, timeoutAfter(30 s)      : ${m("tenantTimeout").toFixed(2)} µs/call`);
  const comparisons = [
    ["tenant", "bare", "tenant vs bare                    "],
    ["tenant", "bareAuth", "tenant vs bare + header           "],
    ["tenantTimeout", "bareAuthTimeout", "tenant + timeout vs bare + header + timeout"],
  ];
  for (const [ours, against, label] of comparisons) {
    const o = pct(m(ours), m(against));
    console.log(
      `    overhead, ${label}: ${o.toFixed(1)} % (per-round spread ${spread(ours, against)})   goal <= 10 %   ${o <= 10 ? "met" : "NOT met"}`,
    );
  }
}

// Bundle size
const tokenManagerDist = join(root, "node_modules", "@tenant-integration", "token-manager", "dist");
const withTokenManager = existsSync(tokenManagerDist);
const entry = [
  `export * from ${JSON.stringify(join(root, "dist", "index.js"))};`,
  withTokenManager ? `export * from "@tenant-integration/token-manager";` : "",
].join("\n");

async function size(contents) {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: "js" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].contents;
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length };
}

const kit = await size(entry);
const clientOnly = await size(`export * from ${JSON.stringify(join(root, "dist", "index.js"))};`);
const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
console.log("");
console.log("Browser bundle (esbuild, minified, gzip -9)");
console.log(`  client + openapi-fetch               : ${kb(clientOnly.min)} min, ${kb(clientOnly.gz)} gzipped`);
if (withTokenManager) {
  console.log(
    `  client + token manager + openapi-fetch: ${kb(kit.min)} min, ${kb(kit.gz)} gzipped (the size goal is the typical-app ratio of the root \`pnpm bench\`)`,
  );
} else {
  console.log(
    "  @tenant-integration/token-manager has no dist/ yet: the kit figure above is client + openapi-fetch only",
  );
}
