#!/usr/bin/env node
// Runs the current package's vitest suite a second time, on Node 24 (`pnpm test` runs it on the
// Node that runs pnpm, Node 20 on our machines). Type tests are not repeated: types do not depend
// on the runtime, and the Node 20 run checks them.
//
// Node 24 comes from `install.mjs` (or NODE24_PATH). When it is missing, CI fails and names it;
// elsewhere the run is left out with a warning that says how to install it. A missing runtime is
// never reported as a pass on it.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { findRuntimes } from "./index.mjs";

const { found, missing } = findRuntimes();
const node24 = found.find((r) => r.name === "node24");
if (!node24) {
  const why = missing.find((m) => m.name === "node24")?.why ?? "not found";
  if (process.env.CI === "true") {
    console.error(`test-on-node24: Node 24 is required in CI and is missing: ${why}`);
    process.exit(1);
  }
  console.warn(`test-on-node24: left out, Node 24 is missing: ${why}`);
  process.exit(0);
}

const cwd = process.cwd();
let vitest;
try {
  vitest = join(createRequire(join(cwd, "package.json")).resolve("vitest/package.json"), "..", "vitest.mjs");
} catch {
  console.error(`test-on-node24: ${cwd} has no vitest to run (add vitest to its devDependencies)`);
  process.exit(1);
}

console.log(`test-on-node24: ${node24.version} (${node24.command})`);
const child = spawn(node24.command, [vitest, "run", "--typecheck.enabled=false", ...process.argv.slice(2)], {
  cwd,
  stdio: "inherit",
  env: { ...process.env, NODE24_PATH: node24.command },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
