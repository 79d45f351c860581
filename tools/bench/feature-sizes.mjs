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
//   kit's part; gzip shares strings across modules, so these do not add up to the gzipped size).
//
// `node feature-sizes.mjs` prints these rows alone (build first).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { measureBuild } from "./sizes.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** The opt-in features: what each entry file adds to the typical app. */
const FEATURES = [
  ["client retries: retryPolicy()", "retry.js"],
  ["client timeout: timeoutAfter(30 s)", "timeout.js"],
  ["client logging: logTo(console)", "client-logging.js"],
  ["session logging: logSessionTo(console)", "session-logging.js"],
];

/** How the rows were measured, for BENCHMARKS.md. */
export const featureSizesMethod = `Entry files bundled as every size figure is (esbuild, browser, ES2022, minified; gzip -9): \`typical-app/kit.js\` and \`typical-app/features/*.js\`, each the typical app plus one opt-in feature imported and used. A feature's cost is the difference; "opt-in" is checked from esbuild's metafile: the feature's bundle must hold package modules the typical app's does not. Rerun: \`node tools/bench/feature-sizes.mjs\` after \`pnpm build\`.`;

const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
const isPackageModule = (path) => path.startsWith("packages/");

export async function featureSizes() {
  const app = await measureBuild({ entryPoints: [join(here, "typical-app", "kit.js")] });
  const rows = [];
  for (const [name, file] of FEATURES) {
    const withIt = await measureBuild({ entryPoints: [join(here, "typical-app", "features", file)] });
    const own = Object.keys(withIt.modules).filter((path) => isPackageModule(path) && !(path in app.modules));
    const cost = `+${kb(withIt.gz - app.gz)} gz, +${kb(withIt.min - app.min)} min`;
    rows.push({
      metric: `browser bundle: typical app on the kit plus ${name} (typical-app/features/${file})`,
      value:
        own.length > 0
          ? `${cost}; its own modules, absent from an app that does not import it: ${own.map((path) => path.replace(/^packages\//, "")).join(", ")}`
          : `${cost}; brings no module of its own: its code ships in every app, imported or not`,
      goal: "opt-in: absent unless imported",
      met: own.length > 0,
    });
  }
  const parts = Object.entries(app.modules)
    .filter(([path]) => !path.startsWith("tools/"))
    .sort((a, b) => b[1] - a[1])
    .map(
      ([path, bytes]) =>
        `${path.replace(/^packages\//, "").replace(/^node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "")} ${kb(bytes)}`,
    );
  rows.push({
    metric:
      "browser bundle: typical app on the kit, module by module (minified bytes; gzip shares strings across modules)",
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
