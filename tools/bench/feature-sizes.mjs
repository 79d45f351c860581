// What the kit's features cost a browser app, and checks that its opt-in features are opt-in, from
// small entry files bundled as every size figure is (sizes.mjs measureBuild): the typical app on the
// kit (typical-app/kit.js) and the same app plus one feature imported and used
// (typical-app/features/*.js). Nothing is patched: a refactor of the packages cannot make these
// figures describe code that is no longer there (issue 29; the former size-what-if.mjs edited
// dist/ files by exact source text).
//
// - A feature's cost: its app's bytes minus the typical app's, gzipped and minified (the call site of
//   the feature is counted: an app that uses it writes one).
// - Opt-in by import (the client's and the token manager's READMEs say an app that does not import
//   retries, timeouts or logging ships none of their code): the feature's app must bring modules of
//   the packages that the typical app does not; a feature whose modules are all in the typical app
//   ships its code to every app, and its row says so and misses.
// - Where the typical app's bytes go: the packages' modules in its bundle, by minified bytes (the
//   kit's part; gzip shares strings across modules, so these do not add up to the gzipped size), and
//   what its gzipped bytes buy, by groups of modules named after what they do (issue 28: the row that
//   says what the kit's bytes over the peer's pay for).
//
// `node feature-sizes.mjs` prints these rows alone (build first).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build, transform } from "esbuild";
import { measureBuild } from "./sizes.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The opt-in features: what each entry file adds to the typical app, and the package modules (paths
 * under packages/) that must be the feature's own, absent from the typical app (a feature with none
 * listed must bring at least one module of its own).
 */
const FEATURES = [
  ["client retries: retryPolicy()", "retry.js", []],
  ["client timeout: timeoutAfter(30 s)", "timeout.js", []],
  ["client logging: logTo(console)", "client-logging.js", []],
  ["session logging: logSessionTo(console)", "session-logging.js", []],
  [
    "a server's sessions: createSessions (the session id rule, sign-ins bound to a browser, the cache of managers)",
    "sessions.js",
    ["token-manager/src/sessions.ts", "token-manager/src/session-id.ts", "token-manager/src/binding.ts"],
  ],
  [
    "refresh intents beside a lock of one's own: refreshIntents (what fileStorage, redisStorage and postgresStorage bring with their locks)",
    "own-lock.js",
    ["token-manager/src/refresh-intent.ts"],
  ],
];

/** How the rows were measured, for BENCHMARKS.md. */
export const featureSizesMethod = `Entry files bundled as every size figure is (esbuild, browser, ES2022, minified; gzip -9): \`typical-app/kit.js\` and \`typical-app/features/*.js\`, each the typical app plus one opt-in feature imported and used. A feature's cost is the difference; "opt-in" is checked from esbuild's metafile of the same apps bundled from the packages' sources (each published package is one module per entry point, which a bundler cuts statement by statement, so only its sources name modules): the feature's bundle must hold package modules the typical app's does not. What the typical app's gzipped bytes buy: its modules in groups (\`SHARES\` in feature-sizes.mjs), each group's figure the app gzipped minus the app without that group's modules gzipped (an estimate: gzip shares strings across modules, so the groups do not add up). Bytes are exact: one build each, no rounds, no A/A. Rerun: \`node tools/bench/feature-sizes.mjs\` after \`pnpm build\`.`;

/**
 * What the typical app's bytes buy (issue 28: the app on the kit is well over 1.15× the one on
 * openapi-fetch + oauth4webapi): the kit's modules grouped by what they do for the app, each group
 * matched by its paths (relative to the repository). Modules that match no group are counted as
 * "other", so a renamed module shows up instead of vanishing.
 */
const SHARES = [
  ["openapi-fetch (both apps carry it)", /openapi-fetch\//],
  [
    "client: the tenant client and its work on every request (bearer scoping, one refresh-and-retry after 401, kept bodies, network errors)",
    /client\/src\/(create-tenant-client|client-state|call|send|access-token-source|base-url|middleware\/)/,
  ],
  [
    "client: typed errors (a class per status, codes, the error value of a non-2xx, WWW-Authenticate scopes)",
    /client\/src\/(errors|www-authenticate)\.ts/,
  ],
  [
    "rules the client and the token manager share, shipped once (base URL, redaction of error bodies, headers and causes, Retry-After)",
    /internal\/src\//,
  ],
  [
    "token manager: sign-in (PKCE, state, pending sign-ins by state, the callback's checks, the code exchange)",
    /token-manager\/src\/(sign-in|pending|pkce|state|encoding)\.ts/,
  ],
  [
    "token manager: the refresh protocol (one refresh under a lock, retries, tokens whose write failed)",
    /token-manager\/src\/(refresh|lock|running-time)\.ts/,
  ],
  ["token manager: tabs (sign-ins and sign-outs told across tabs, rotation markers)", /token-manager\/src\/tabs\.ts/],
  [
    "token manager: token requests and answers, revocation",
    /token-manager\/src\/(token-request|token-response|revoke|retry-after)\.ts/,
  ],
  ["token manager: the token record, the session, web storage", /token-manager\/src\/(token-record|session|storage\/)/],
  [
    "token manager: options, state, errors, the scope list",
    /token-manager\/src\/(token-manager|manager-state|options|errors|redact)\.ts|types\/dist\//,
  ],
  ["the app's own code", /tools\/bench\/typical-app\//],
];

/**
 * Where the packages' modules are told apart: their sources. The published packages are one module per
 * entry point (`tools/build/esm.mjs`), which a bundler cuts statement by statement, so a bundle of
 * them names no module; bundled from their sources (with their `sideEffects: false`, as published),
 * the same app names each module that brings code. Byte costs are measured on the published build.
 */
const SOURCES = Object.fromEntries(
  ["client", "token-manager", "internal"].map((name) => [
    `@tenant-integration/${name}`,
    join(here, "..", "..", "packages", name, "src", "index.ts"),
  ]),
);

/**
 * The gzipped bytes each group of {@link SHARES} adds to the typical app: the app's bundle (minified
 * as every size figure is) gzipped, minus the same bundle without that group's modules gzipped. An
 * estimate: gzip shares strings across modules, so the groups do not add up to the whole, and a
 * group's callers would shrink too without it. The modules are told apart by the comment esbuild
 * writes before each one when whitespace is kept; whitespace is minified afterwards.
 */
async function bytesByShare(entry) {
  const result = await build({
    entryPoints: [entry],
    alias: SOURCES,
    bundle: true,
    minifySyntax: true,
    minifyIdentifiers: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    absWorkingDir: join(here, "..", ".."),
    logLevel: "silent",
  });
  const modules = result.outputFiles[0].text.split(/^(?=\/\/ (?:packages|node_modules|tools)\/)/m);
  const gz = async (code) =>
    gzipSync((await transform(code, { minifyWhitespace: true, loader: "js", format: "esm" })).code, { level: 9 })
      .length;
  const whole = await gz(modules.join(""));
  const path = (module) => module.slice(0, module.indexOf("\n"));
  const shares = [...SHARES, ["other", null]];
  const out = [];
  for (const [name, pattern] of shares) {
    const inShare = (module) =>
      pattern ? pattern.test(path(module)) : !SHARES.some(([, other]) => other.test(path(module)));
    if (!modules.some(inShare)) continue;
    out.push([name, whole - (await gz(modules.filter((module) => !inShare(module)).join("")))]);
  }
  return { shares: out };
}

const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
const isPackageModule = (path) => path.startsWith("packages/");

export async function featureSizes() {
  const app = await measureBuild({ entryPoints: [join(here, "typical-app", "kit.js")] });
  const appModules = (await measureBuild({ entryPoints: [join(here, "typical-app", "kit.js")], alias: SOURCES }))
    .modules;
  const rows = [];
  for (const [name, file, mustOwn] of FEATURES) {
    const entry = join(here, "typical-app", "features", file);
    const withIt = await measureBuild({ entryPoints: [entry] });
    const itsModules = (await measureBuild({ entryPoints: [entry], alias: SOURCES })).modules;
    const own = Object.keys(itsModules)
      .filter((path) => isPackageModule(path) && !(path in appModules))
      .map((path) => path.replace(/^packages\//, ""));
    const shipped = mustOwn.filter((path) => !own.includes(path));
    const cost = `+${kb(withIt.gz - app.gz)} gz, +${kb(withIt.min - app.min)} min`;
    rows.push({
      metric: `browser bundle: typical app on the kit plus ${name} (typical-app/features/${file})`,
      value:
        own.length === 0
          ? `${cost}; brings no module of its own: its code ships in every app, imported or not`
          : `${cost}; its own modules, absent from an app that does not import it: ${own.join(", ")}${
              shipped.length ? `; yet in every app, imported or not: ${shipped.join(", ")}` : ""
            }`,
      goal: "opt-in: absent unless imported",
      met: own.length > 0 && shipped.length === 0,
      exact: true,
    });
  }
  const parts = Object.entries(appModules)
    .filter(([path]) => !path.startsWith("tools/"))
    .sort((a, b) => b[1] - a[1])
    .map(
      ([path, bytes]) =>
        `${path.replace(/^packages\//, "").replace(/^node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "")} ${kb(bytes)}`,
    );
  const { shares } = await bytesByShare(join(here, "typical-app", "kit.js"));
  rows.push({
    metric:
      "browser bundle: typical app on the kit, what its gzipped bytes buy (each group: the app gzipped minus the app without it; gzip shares strings, so the groups do not add up)",
    value: `${kb(app.gz)} gz in all: ${shares.map(([name, bytes]) => `${name} ${kb(bytes)}`).join("; ")}`,
    goal: "",
    met: null,
  });
  rows.push({
    metric:
      "browser bundle: typical app on the kit, module by module (minified bytes, bundled from the packages' sources; gzip shares strings across modules)",
    value: `${kb(app.min)} min in all: ${parts.join(", ")}`,
    goal: "",
    met: null,
  });
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await featureSizes())
    console.log(`${row.metric}: ${row.value}${row.goal ? ` (${row.met ? "met" : "MISSED"})` : ""}`);
}
