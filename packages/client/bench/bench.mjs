// Bench of @tenant-integration/client. Run `pnpm build` first (it reads dist/).
//
// 1. Per-call overhead of the tenant client (staticToken, default middleware) over bare
//    openapi-fetch, both with the same stub fetch: warm-up, then several rounds of many calls;
//    the median round of each is compared. Goal: at most 10 %.
// 2. Browser bundle size (esbuild, minified, gzipped) of client + token manager + openapi-fetch.
//    Goal: at most 6 kB. Figures are printed with their goals; the script never fails on them.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import createClient from "openapi-fetch";
import { createTenantClient, staticToken } from "../dist/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const baseUrl = "https://acme.tenant.example";
const body = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org" });
const headers = { "content-type": "application/json" };
const stub = async () => new Response(body, { status: 200, headers });

const WARMUP = 5_000;
const CALLS = 20_000;
const ROUNDS = 7;

async function round(client, calls) {
  const start = performance.now();
  for (let i = 0; i < calls; i++) await client.GET("/api/v1/auth/user");
  return ((performance.now() - start) * 1000) / calls; // µs per call
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const bare = createClient({ baseUrl, fetch: stub });
// context: what openapi-fetch itself charges once any middleware is registered (request id, options object, hook loops)
const withEmptyMiddleware = createClient({ baseUrl, fetch: stub });
withEmptyMiddleware.use({ onRequest() {} });
const tenant = createTenantClient({ baseUrl, auth: staticToken("at_2YotnFZFEjr1zCsicMWpAA"), fetch: stub });

await round(bare, WARMUP);
await round(tenant, WARMUP);
await round(withEmptyMiddleware, WARMUP);
const bareRounds = [];
const tenantRounds = [];
const emptyRounds = [];
for (let r = 0; r < ROUNDS; r++) {
  // interleave so drift (GC, CPU frequency) hits both alike
  bareRounds.push(await round(bare, CALLS));
  tenantRounds.push(await round(tenant, CALLS));
  emptyRounds.push(await round(withEmptyMiddleware, CALLS));
}
const e = median(emptyRounds);
const b = median(bareRounds);
const t = median(tenantRounds);
const overhead = ((t - b) / b) * 100;

console.log("Per-call overhead (GET /api/v1/auth/user, stub fetch)");
console.log(`  bare openapi-fetch : ${b.toFixed(2)} µs/call (median of ${ROUNDS} rounds x ${CALLS} calls)`);
console.log(`  tenant client      : ${t.toFixed(2)} µs/call`);
console.log(`  openapi-fetch + 1 empty middleware: ${e.toFixed(2)} µs/call (${(((e - b) / b) * 100).toFixed(1)} %, openapi-fetch's own middleware cost)`);
console.log(`  overhead           : ${overhead.toFixed(1)} %   goal <= 10 %   ${overhead <= 10 ? "met" : "NOT met"}`);

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
  console.log(`  client + token manager + openapi-fetch: ${kb(kit.min)} min, ${kb(kit.gz)} gzipped   goal <= 6 kB   ${kit.gz <= 6 * 1024 ? "met" : "NOT met"}`);
} else {
  console.log("  @tenant-integration/token-manager has no dist/ yet: the kit figure above is client + openapi-fetch only");
  console.log(`  goal for the whole kit <= 6 kB; client + openapi-fetch alone is ${kb(clientOnly.gz)} (${clientOnly.gz <= 6 * 1024 ? "within" : "over"} it)`);
}
