// Browser bundle bytes (esbuild, minified, then gzip -9) of everything each package exports, of
// the kit: client + token manager (+ openapi-fetch, which the client bundles in), and of a typical
// app on the kit beside the same app on each peer (typical-app/): openapi-fetch + oauth4webapi (the
// size goal is that ratio), oidc-client-ts + openapi-fetch, auth0-spa-js + openapi-fetch,
// @badgateway/oauth2-client + openapi-fetch, and openapi-fetch alone as the floor. `node sizes.mjs`
// prints these rows alone.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

/** The goal (issue 20): the typical app on the kit is at most this multiple of the same app on openapi-fetch + oauth4webapi. */
const RATIO_GOAL = 1.15;

async function measure(contents, resolveDir) {
  return measureBuild({ stdin: { contents, resolveDir, loader: "js" } });
}

/**
 * Bundles `input` (esbuild options: entry points or stdin, and plugins) as a browser app, minified,
 * and returns its bytes minified and gzipped (-9). The one bundling setup of every size figure.
 */
export async function measureBuild(input) {
  const result = await build({
    ...input,
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

export async function bundleSizes(resolveDir) {
  const rows = [];
  const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
  const entries = [
    ["@tenant-integration/types", `export * from "@tenant-integration/types";`, null],
    ["openapi-fetch alone (createClient, which the client builds on)", `export { default } from "openapi-fetch";`, null],
    ["@tenant-integration/token-manager", `export * from "@tenant-integration/token-manager";`, null],
    ["@tenant-integration/client (with openapi-fetch)", `export * from "@tenant-integration/client";`, null],
    ["kit: client + token manager + openapi-fetch", `export * from "@tenant-integration/client"; export * from "@tenant-integration/token-manager";`, null],
  ];
  const gzOf = {};
  for (const [name, contents, goal] of entries) {
    const { min, gz } = await measure(contents, resolveDir);
    gzOf[name] = gz;
    rows.push({
      metric: `browser bundle: ${name}`,
      value: `${kb(min)} min / ${kb(gz)} gz`,
      goal: goal ? `≤ ${kb(goal)} gz` : "",
      met: goal ? gz <= goal : null,
    });
  }
  // Where the kit's bytes go: each part as it is added to the bundle (gzip shares strings across
  // parts, so these increments are smaller than the parts measured alone).
  const [, fetchOnly, , clientAndFetch, kit] = entries.map(([name]) => gzOf[name]);
  rows.push({
    metric: "browser bundle: kit, part by part as added (gz)",
    value: `openapi-fetch ${kb(fetchOnly)} + client ${kb(clientAndFetch - fetchOnly)} + token manager ${kb(kit - clientAndFetch)}`,
    goal: "",
    met: null,
  });
  // The floor: openapi-fetch and the token manager with no client at all.
  const floor = await measure(`export { default } from "openapi-fetch"; export * from "@tenant-integration/token-manager";`, resolveDir);
  rows.push({
    metric: "browser bundle: kit without the client (openapi-fetch + token manager)",
    value: `${kb(floor.min)} min / ${kb(floor.gz)} gz`,
    goal: "",
    met: null,
  });
  rows.push(...(await typicalAppRatios(kb)));
  rows.push({ metric: "browser bundle: @tenant-integration/sandbox", value: "n/a (a Node server; its app runs on web APIs but is not shipped to browsers)", goal: "", met: null });
  return rows;
}

/** The peers of the typical app: the same app on other libraries (typical-app/), and the goal against each. */
const PEERS = [
  ["openapi-fetch + oauth4webapi", "baseline.js", RATIO_GOAL],
  ["oidc-client-ts + openapi-fetch", "oidc-client-ts.js", null],
  ["auth0-spa-js + openapi-fetch", "auth0-spa-js.js", null],
  ["@badgateway/oauth2-client + openapi-fetch", "oauth2-client.js", null],
  ["openapi-fetch alone, a token from elsewhere (the floor: no sign-in, refresh or revocation)", "openapi-fetch-only.js", null],
];

/**
 * The size goal: a typical browser app (sign-in, GET /api/v1/auth/user with refresh, revoke) on the
 * kit, against the same app on each peer (see typical-app/); the goal is set against openapi-fetch +
 * oauth4webapi, which does less.
 */
async function typicalAppRatios(kb) {
  const app = (file) => measureBuild({ entryPoints: [join(dirname(fileURLToPath(import.meta.url)), "typical-app", file)] });
  const kit = await app("kit.js");
  const rows = [];
  for (const [peer, file, goal] of PEERS) {
    const other = await app(file);
    const ratio = kit.gz / other.gz;
    rows.push({
      metric: `browser bundle: typical app on the kit vs on ${peer} (gz)`,
      value: `kit ${kb(kit.gz)} gz (${kb(kit.min)} min) vs ${kb(other.gz)} gz (${kb(other.min)} min): ${ratio.toFixed(3)}×`,
      goal: goal === null ? "" : `≤ ${goal}×`,
      met: goal === null ? null : ratio <= goal,
    });
  }
  return rows;
}

// `node tools/bench/sizes.mjs`: the size rows alone (build first), without the rest of `pnpm bench`.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await bundleSizes(dirname(fileURLToPath(import.meta.url)))) {
    console.log(`${row.metric}: ${row.value}${row.goal ? ` (goal ${row.goal}: ${row.met ? "met" : "MISSED"})` : ""}`);
  }
}
