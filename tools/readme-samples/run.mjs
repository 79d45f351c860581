// README samples as programs: a ```ts sample transpiled and run by Node as the reader would run it,
// with a person's browser played by the test (it opens the authorize URL the program prints).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import ts from "typescript";

/** A TypeScript sample as an ES module (types erased, nothing checked: see typeCheckSamples). */
export function toJavaScript(source) {
  return ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

const PRELOAD = "clock-offset.preload.mjs";

/**
 * A fresh directory for programs under `<packageRoot>/node_modules/.cache/`, so that a program's
 * imports resolve to the package's dependencies as a user's would. The caller removes it.
 */
export function programDirectory(packageRoot, prefix = "readme-program-") {
  const cache = join(packageRoot, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, prefix));
  // The machine's clock moved forward by CLOCK_OFFSET_MS: the same user, running the program later.
  writeFileSync(
    join(dir, PRELOAD),
    "const now = Date.now;\nconst offset = Number(process.env.CLOCK_OFFSET_MS) || 0;\nDate.now = () => now() + offset;\n",
  );
  return dir;
}

const AUTHORIZE_URL = /https?:\/\/\S+\/oauth\/authorize\?\S+/;

/**
 * Runs `source` (JavaScript) as `<dir>/<name>.run.mjs` with Node. When the program prints an
 * authorize URL, `openAuthorizeUrl(url)` is called once, as the person would open it in a browser.
 * Resolves when the program has exited and the URL handler has settled.
 */
export async function runProgram({ dir, name, source, env = {}, clockOffsetMs = 0, openAuthorizeUrl }) {
  const file = join(dir, `${name}.run.mjs`);
  writeFileSync(file, source);
  const child = spawn(process.execPath, ["--import", join(dir, PRELOAD), file], {
    cwd: dir,
    env: { ...process.env, ...env, CLOCK_OFFSET_MS: String(clockOffsetMs) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let opened;
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    stdout += chunk;
    const url = AUTHORIZE_URL.exec(stdout)?.[0];
    if (url && !opened) {
      opened = Promise.resolve(openAuthorizeUrl?.(url)).then(
        () => null,
        (error) => {
          // The program would wait for a callback that never comes: stop it, and report why.
          child.kill();
          return error;
        },
      );
    }
  });
  const code = await new Promise((resolve, reject) => child.on("close", resolve).on("error", reject));
  const failure = await opened;
  if (failure) throw failure;
  return { code, stdout, stderr, openedAuthorizeUrl: opened !== undefined };
}

/**
 * The browser of a person signing in to a tenant that approves at once (the sandbox with
 * auto-approve): GET the authorize URL, expect a 302, and follow it to the program's redirect URI.
 * Returns the redirect URI's response.
 */
export async function approveInBrowser(url) {
  const authorize = await fetch(url, { redirect: "manual" });
  const location = authorize.headers.get("location");
  if (authorize.status !== 302 || !location)
    throw new Error(`authorize answered ${authorize.status}, not a 302 redirect`);
  const callback = await fetch(location);
  if (!callback.ok) throw new Error(`the redirect URI answered ${callback.status}`);
  return callback;
}

/**
 * Runs `source` (a vitest test file, TypeScript as written) as `<dir>/<name>.test.ts` with the vitest
 * that `dir` resolves (the package's own), as the reader would run `npx vitest run`. Resolves with the
 * exit code and output once vitest has exited.
 */
export async function runVitest({ dir, name, source }) {
  const file = join(dir, `${name}.test.ts`);
  writeFileSync(file, source);
  // A config of its own, so that vitest does not pick up the package's (found above `dir`).
  const config = join(dir, `${name}.vitest.config.mjs`);
  writeFileSync(config, `export default { test: { include: [${JSON.stringify(`${name}.test.ts`)}] } };\n`);
  const vitest = join(dirname(createRequire(file).resolve("vitest/package.json")), "vitest.mjs");
  const child = spawn(process.execPath, [vitest, "run", "--root", dir, "--config", config], {
    cwd: dir,
    // Not the outer vitest's worker settings: a fresh run, as from a terminal.
    env: { ...process.env, VITEST: "", VITEST_WORKER_ID: "", VITEST_POOL_ID: "", NO_COLOR: "1", CI: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
  const code = await new Promise((resolve, reject) => child.on("close", resolve).on("error", reject));
  return { code, stdout, stderr, openedAuthorizeUrl: false };
}
