// Browser bundle bytes (esbuild, minified, then gzip -9) of everything each package exports, of
// the kit: client + token manager (+ openapi-fetch, which the client bundles in), and of a typical
// app on the kit beside the same app on each peer (typical-app/): openapi-fetch + oauth4webapi (the
// size guard is that ratio), @badgateway/oauth2-client + openapi-fetch, oidc-client-ts + openapi-fetch,
// and openapi-fetch alone as the floor; every app but the floor first proves it works against the
// sandbox (peer-check.mjs).
// `node sizes.mjs` prints these rows alone (build first).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { TYPICAL_APPS, checkTypicalApps } from "./peer-check.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** How the rows were measured, for BENCHMARKS.md. */
export const sizesMethod = `esbuild (browser, ES2022, ESM, minified, tree-shaken), then gzip -9, of each package's whole export and of the typical app (\`typical-app/\`: sign-in with PKCE, the code exchange, GET /api/v1/auth/user with refresh, revocation) on the kit and on each peer. Before any app's bytes count, \`peer-check.mjs\` bundles it the same way with \`typical-app/tenant.js\` pointing at a sandbox (\`--auto-approve --test-clock\`), runs it in a Node process of its own with the browser globals it uses (localStorage, sessionStorage, location, window and its events), signs in, reads the user, moves the clocks 15 min 1 s on, makes 5 calls at once and requires exactly one refresh in the sandbox's ledger, then signs out and requires a token of the session revoked at the tenant (its event log). oauth4webapi, @badgateway/oauth2-client and oidc-client-ts send their token requests as forms; the tenant takes JSON, so the first two apps pass a fetch of their own through each library's documented hook, and the oidc-client-ts app, whose library has no such hook and calls the page's fetch, wraps the page's fetch for the tenant's /oauth/ endpoints alone (both in \`typical-app/json-bodies.js\`, a few lines). Peers with no working app for this tenant are listed with why, not compared. Bytes are exact: one build each, no rounds, no spread, no A/A (the size guard is met when the ratio is at or under it). Rerun: \`node tools/bench/sizes.mjs\` (and \`node tools/bench/peer-check.mjs\` for the checks alone) after \`pnpm build\`.`;

/**
 * The guard (issue 41 point 8): the typical app on the kit stays under this multiple of the same app
 * on openapi-fetch + oauth4webapi. Issue 20's 1.15× was set before the kit bought what that app does
 * not (cross-tab single flight, typed errors, redaction, the 401 retry, refresh intents); the guard
 * holds the bytes where they are (1.50× when it was set), as a check on growth, not a reason to drop
 * a feature. What grew and why: `feature-sizes.mjs`, group by group.
 */
const RATIO_GOAL = 1.55;

async function measure(contents, resolveDir) {
  return measureBuild({ stdin: { contents, resolveDir, loader: "js" } });
}

/**
 * Bundles `input` (esbuild options: entry points or stdin, and plugins) as a browser app, minified,
 * and returns its bytes minified and gzipped (-9), and the minified bytes each module brought
 * (`modules`: path relative to the repository root → bytes, only modules with bytes in the output).
 * The one bundling setup of every size figure.
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
    metafile: true,
    absWorkingDir: REPO,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].contents;
  const modules = {};
  for (const [path, { bytesInOutput }] of Object.entries(Object.values(result.metafile.outputs)[0].inputs)) {
    if (bytesInOutput > 0) modules[path] = bytesInOutput;
  }
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length, modules };
}

export async function bundleSizes(resolveDir) {
  const rows = [];
  const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
  const entries = [
    ["@tenant-integration/types", `export * from "@tenant-integration/types";`, null],
    [
      "openapi-fetch alone (createClient, which the client builds on)",
      `export { default } from "openapi-fetch";`,
      null,
    ],
    ["@tenant-integration/token-manager", `export * from "@tenant-integration/token-manager";`, null],
    ["@tenant-integration/client (with openapi-fetch)", `export * from "@tenant-integration/client";`, null],
    [
      "kit: client + token manager + openapi-fetch",
      `export * from "@tenant-integration/client"; export * from "@tenant-integration/token-manager";`,
      null,
    ],
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
      exact: true,
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
  const floor = await measure(
    `export { default } from "openapi-fetch"; export * from "@tenant-integration/token-manager";`,
    resolveDir,
  );
  rows.push({
    metric: "browser bundle: kit without the client (openapi-fetch + token manager)",
    value: `${kb(floor.min)} min / ${kb(floor.gz)} gz`,
    goal: "",
    met: null,
  });
  rows.push(...(await typicalAppRatios(kb)));
  rows.push({
    metric: "browser bundle: @tenant-integration/sandbox",
    value: "n/a (a Node server; its app runs on web APIs but is not shipped to browsers)",
    goal: "",
    met: null,
  });
  return rows;
}

/**
 * The peers of the typical app: the same app on other libraries (typical-app/) and the goal against
 * each. Every app but the floor proves it works (peer-check.mjs TYPICAL_APPS) before its bytes count;
 * the floor is no app (it has no sign-in), so it has nothing to prove.
 */
const PEERS = [
  { peer: "openapi-fetch + oauth4webapi", file: "baseline.js", goal: RATIO_GOAL },
  { peer: "@badgateway/oauth2-client + openapi-fetch", file: "oauth2-client.js", goal: null },
  { peer: "oidc-client-ts + openapi-fetch", file: "oidc-client-ts.js", goal: null },
  {
    peer: "openapi-fetch alone, a token from elsewhere (the floor: no sign-in, refresh or revocation; not an app)",
    file: "openapi-fetch-only.js",
    goal: null,
    floor: true,
  },
];

/**
 * Peers once compared and dropped because their app cannot sign in to this tenant, even through
 * their documented hooks (tools/bench/README.md, "Fair baselines"), with why, from their own code.
 */
const NOT_WORKING = [
  [
    "auth0-spa-js (2.27) + openapi-fetch",
    'it derives its endpoints from an Auth0 domain (/authorize, where the tenant has /oauth/authorize) and refuses a token response without an ID token ("ID token is required but missing"); the tenant issues none (its useFormData: false would send JSON, but the other two remain)',
  ],
];

/**
 * The size goal: a typical browser app (sign-in, GET /api/v1/auth/user with refresh, revoke) on the
 * kit, against the same app on each peer (see typical-app/); the goal is set against openapi-fetch +
 * oauth4webapi. An app's bytes count only once it has worked against the sandbox (peer-check.mjs):
 * a peer that cannot sign in fails its row, with why.
 */
async function typicalAppRatios(kb) {
  const app = (file) =>
    measureBuild({ entryPoints: [join(dirname(fileURLToPath(import.meta.url)), "typical-app", file)] });
  const unchecked = PEERS.filter((p) => !p.floor && !TYPICAL_APPS.includes(p.file));
  if (unchecked.length > 0)
    throw new Error(`peer apps not in peer-check.mjs TYPICAL_APPS: ${unchecked.map((p) => p.file).join(", ")}`);
  const verdicts = Object.fromEntries((await checkTypicalApps(TYPICAL_APPS)).map((v) => [v.file, v]));
  const broken = (file) => (verdicts[file] && !verdicts[file].ok ? verdicts[file].reason : undefined);
  const kit = await app("kit.js");
  const rows = [];
  for (const { peer, file, goal } of PEERS) {
    const metric = `browser bundle: typical app on the kit vs on ${peer} (gz)`;
    const failure = broken("kit.js")
      ? `the app on the kit does not work: ${broken("kit.js")}`
      : broken(file)
        ? `the app on ${peer} does not work: ${broken(file)}`
        : undefined;
    if (failure) {
      rows.push({
        metric,
        value: `failed: ${failure}`,
        goal: goal === null ? "" : `≤ ${goal}×`,
        met: false,
        failed: true,
      });
      continue;
    }
    const other = await app(file);
    const ratio = kit.gz / other.gz;
    const proof = verdicts[file]
      ? "; both apps signed in to the sandbox, served 5 concurrent calls after expiry with one refresh and revoked at sign-out"
      : "";
    rows.push({
      metric,
      value: `kit ${kb(kit.gz)} gz (${kb(kit.min)} min) vs ${kb(other.gz)} gz (${kb(other.min)} min): ${ratio.toFixed(3)}×${proof}`,
      goal: goal === null ? "" : `≤ ${goal}×`,
      met: goal === null ? null : ratio <= goal,
      // bytes: exact, no rounds to spread (report.mjs)
      exact: true,
    });
  }
  for (const [peer, why] of NOT_WORKING) {
    rows.push({
      metric: `browser bundle: typical app on ${peer}`,
      value: `not compared: no working app can be written on it for this tenant: ${why}`,
      goal: "",
      met: null,
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
