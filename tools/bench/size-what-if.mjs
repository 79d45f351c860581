// What the typical app on the kit would weigh without some of its features: the app of
// typical-app/kit.js bundled as sizes.mjs does, with parts of the built packages left out at bundle
// time, next to the openapi-fetch + oauth4webapi baseline. (Logging, in the client and the token
// manager, the client's retries and its timeouts are not here: they are opt-in imports, which the typical app does
// not make.) For deciding which features are worth their bytes; the result is never shipped. Each removal checks that it found what it removes, so a
// refactor makes this script fail instead of printing a figure for code that is no longer there.
// `pnpm bench` prints its rows (featureCosts); `node tools/bench/size-what-if.mjs` prints them alone
// (run `pnpm build` first).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { measureBuild } from "./sizes.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** `source` without every block that starts with `marker` (ending with its opening brace; braces balanced). */
function withoutBlocks(source, marker) {
  let out = "";
  let at = 0;
  for (;;) {
    const start = source.indexOf(marker, at);
    if (start < 0) return out + source.slice(at);
    out += source.slice(at, start);
    let depth = 0;
    let end = start + marker.length - 1;
    for (; end < source.length; end++) {
      if (source[end] === "{") depth++;
      else if (source[end] === "}" && --depth === 0) break;
    }
    at = end + 1;
  }
}

/** A change to one built file, which must change it. */
const change = (file, edit) => ({ file, edit });

/** The features, each as the changes that leave it out. */
const FEATURES = {
  // Logging (logTo, logSessionTo), client retries (retryPolicy) and timeouts (timeoutAfter) are
  // opt-in: the typical app ships none.
  // The timeout code is an opt-in import (timeoutAfter); what is left is the client's check of the
  // option and the call's use of a limit it was given.
  "client timeout option (its check and use; the timeout code is an opt-in import)": [
    change("client/dist/create-tenant-client.js", (s) =>
      s
        .replace(/if \(init !== undefined && \("timeout" in init[\s\S]*?\n        \}\n/, "")
        .replace(/const running = limit [\s\S]*?running\.signal \};\n/, "")
        .replace(/throw running \? [^;]*;/, "throw failure;")
        .replace("running?.stop();", "")
        .replace('const defaultTimeout = timeoutOf(options, "");', "")
        .replace("let limit = defaultTimeout;", ""),
    ),
  ],
  // The lines, levels and redaction of logging are opt-in imports (logTo, logSessionTo); what every
  // app ships are the call sites that report an event when a logger was given. esbuild folds most of
  // them away once the logger is a constant undefined, so this is a lower bound.
  "logging call sites (client and token manager; the logging code is an opt-in import)": [
    change("client/dist/middleware/core.js", (s) =>
      s.replace("export function coreMiddleware({ prefix, auth, retry, onRetry, parts, log }) {", "export function coreMiddleware({ prefix, auth, retry, onRetry, parts }) {\n    const log = undefined;"),
    ),
    change("token-manager/dist/token-manager.js", (s) => s.replace("const log = options.logger;", "const log = undefined;")),
  ],
  "client raw": [change("client/dist/create-tenant-client.js", (s) => s.replace("raw: typedClient(true), ", ""))],
  // Used only with a storage that brings its own lock (fileStorage, Redis: never in a browser). It
  // could leave browser bundles only if those storages brought it, and token-store-redis imports
  // nothing of the token manager at run time (architecture.md).
  "token manager process coordination (refresh intents, checks right before sending)": [
    change("token-manager/dist/token-manager.js", (s) =>
      withoutBlocks(
        s.replace(
          /const readIntent = async[\s\S]*?(?=const refresh = async)/,
          "const dropIntent = async () => {}, blockingIntent = async () => undefined, awaitIntent = async () => {};\n",
        ),
        "if (intents) {",
      ),
    ),
  ],
  "token manager scope check (against the contract's 37 scope names)": [
    change("token-manager/dist/token-manager.js", (s) => s.replace("scopes.find((s) => !SCOPES.includes(s))", "undefined")),
  ],
  "client redaction (error bodies and causes)": [
    change("client/dist/redact.js", (s) => s.replace(/export function redact\([\s\S]*$/, "export function redact(value) { return value; }\n")),
  ],
  "client error classes per status (one HttpError for all)": [
    change("client/dist/errors.js", (s) => s.replace(/switch \(response\.status\) \{[\s\S]*?\n {4}\}\n/, "return new HttpError(init);\n")),
  ],
};

async function gzipOf(entry, changes) {
  const plugin = {
    name: "what-if",
    setup(b) {
      b.onLoad({ filter: /dist[\\/].*\.js$/ }, (args) => {
        const mine = changes.filter((c) => args.path.replaceAll("\\", "/").endsWith(c.file));
        if (mine.length === 0) return undefined;
        let contents = readFileSync(args.path, "utf8");
        for (const { file, edit } of mine) {
          const edited = edit(contents);
          if (edited === contents) throw new Error(`size-what-if: nothing to leave out in ${file}; update this script to the code`);
          contents = edited;
        }
        return { contents, loader: "js" };
      });
    },
  };
  const { gz } = await measureBuild({ entryPoints: [join(here, "typical-app", entry)], plugins: [plugin] });
  return gz;
}

/**
 * What each feature costs the typical app: the app bundled without it, next to the baseline, as rows
 * of `pnpm bench`. Never shipped; for deciding which features are worth their bytes.
 */
export async function featureCosts() {
  const baseline = await gzipOf("baseline.js", []);
  const kit = await gzipOf("kit.js", []);
  const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
  const row = (label, gz) => ({
    metric: `browser bundle: typical app on the kit ${label} (what-if, gz)`,
    value: `${kb(gz)}: ${(gz / baseline).toFixed(3)}× openapi-fetch + oauth4webapi (${kb(kit - gz)} less than as built)`,
    goal: "",
    met: null,
  });
  const rows = [];
  for (const [name, changes] of Object.entries(FEATURES)) rows.push(row(`without ${name}`, await gzipOf("kit.js", changes)));
  rows.push(row("without all of the above", await gzipOf("kit.js", Object.values(FEATURES).flat())));
  return rows;
}

// `node tools/bench/size-what-if.mjs`: these rows alone (build first).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const { metric, value } of await featureCosts()) console.log(`${metric}: ${value}`);
}
