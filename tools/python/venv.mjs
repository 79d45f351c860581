#!/usr/bin/env node
// Makes sure the repository's Python virtual environment exists and matches the lock:
// `<root>/.venv`, made with the machine's python3 (3.11 or newer), holding exactly
// tools/python/requirements.lock (hash-checked) and the SDK (packages/python) installed editable.
// Fast when nothing changed (a stamp holds the hash of the lock and of the SDK's pyproject.toml).
// Safe to run from several turbo tasks at once: one process builds, the others wait for it.
//
//   node tools/python/venv.mjs            ensure, then print the venv's python path
//   node tools/python/venv.mjs --print    the same, quietly (for scripts: `$(node venv.mjs --print)`)
//
// Exported for scripts: `ensureVenv()` resolves to the path of the venv's python.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, "..", "..");
export const venvDir = join(root, ".venv");
export const python = join(venvDir, "bin", "python");
const lockFile = join(here, "requirements.lock");
const sdkDir = join(root, "packages", "python");
const stampFile = join(venvDir, ".tenant-integration-stamp");
const busyDir = join(root, ".venv.building");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function digest() {
  const hash = createHash("sha256");
  hash.update(readFileSync(lockFile));
  hash.update(readFileSync(join(sdkDir, "pyproject.toml")));
  return hash.digest("hex");
}

function run(command, args, what, quiet) {
  if (!quiet) console.error(`[python venv] ${what}`);
  const result = spawnSync(command, args, { stdio: ["ignore", quiet ? "pipe" : "inherit", "inherit"], cwd: root });
  if (result.error) throw new Error(`${what}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${what}: exit ${result.status}`);
}

function systemPython() {
  for (const candidate of [process.env.PYTHON, "python3.11", "python3"].filter(Boolean)) {
    const probe = spawnSync(candidate, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], {
      encoding: "utf8",
    });
    if (probe.status !== 0) continue;
    const [major, minor] = probe.stdout.trim().split(".").map(Number);
    if (major === 3 && minor >= 11) return candidate;
  }
  throw new Error("Python 3.11 or newer is needed (python3 on the PATH, or PYTHON=/path/to/python3)");
}

const fresh = (wanted) => existsSync(python) && existsSync(stampFile) && readFileSync(stampFile, "utf8") === wanted;

/** Ensures the venv; resolves to the path of its python. */
export async function ensureVenv({ quiet = false } = {}) {
  const wanted = digest();
  if (fresh(wanted)) return python;
  // One builder at a time: mkdir is atomic. A builder killed midway leaves the directory; it is
  // taken over after 10 minutes without a change (no install here takes that long).
  for (;;) {
    try {
      mkdirSync(busyDir);
      break;
    } catch (e) {
      if (e.code !== "EEXIST") throw e;
      if (Date.now() - statSync(busyDir, { throwIfNoEntry: false })?.mtimeMs > 600_000)
        rmSync(busyDir, { recursive: true, force: true });
      await sleep(500);
      if (fresh(wanted)) return python;
    }
  }
  try {
    if (fresh(wanted)) return python;
    rmSync(stampFile, { force: true });
    if (!existsSync(python)) run(systemPython(), ["-m", "venv", venvDir], `creating ${venvDir}`, quiet);
    run(
      python,
      [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--require-hashes",
        "--no-deps",
        "-r",
        lockFile,
      ],
      "installing tools/python/requirements.lock (pinned, hash-checked)",
      quiet,
    );
    run(
      python,
      [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-build-isolation",
        "-e",
        sdkDir,
      ],
      "installing packages/python (editable)",
      quiet,
    );
    writeFileSync(stampFile, wanted);
    return python;
  } finally {
    rmSync(busyDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const quiet = process.argv.includes("--print");
  ensureVenv({ quiet }).then(
    (path) => console.log(path),
    (e) => {
      console.error(`[python venv] ${e.message}`);
      process.exit(1);
    },
  );
}
