// The README's quick start on a fresh clone (issue 27): `pnpm install` prints no warning a newcomer
// cannot act on (no "Failed to create bin" for the sandbox's bin, no "Ignored build scripts" box),
// and Ctrl-C on `pnpm start` stops it with status 0 and no "ELIFECYCLE Command failed".
//
// The clone is a `git clone` of the repository with the work tree's uncommitted changes copied in,
// so they are tested too (no dist/, no node_modules/). Its `pnpm start` builds from the
// repository's turbo cache, read only: the build is cache hits once `pnpm test` has built everything
// (turbo.json makes this test wait for every build), and the repository's outputs and cache are
// never touched.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
let clone: string;

/** The environment of a newcomer's shell: none of the variables the outer pnpm and turbo set for this test. */
function newcomerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|TURBO_|PNPM_SCRIPT)/i.test(name)),
  );
  return { ...env, TURBO_TELEMETRY_DISABLED: "1", ...extra };
}

beforeAll(() => {
  clone = mkdtempSync(join(tmpdir(), "fresh-clone-"));
  execFileSync("git", ["clone", "--quiet", root, clone]);
  // Then the work tree's changes against HEAD, staged or not, and its new files: what a clone of
  // them once committed would hold.
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of [
    ...git("diff", "-z", "--name-only", "--no-renames", "HEAD"),
    ...git("ls-files", "-z", "--others", "--exclude-standard"),
  ]) {
    if (existsSync(join(root, file))) {
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      copyFileSync(join(root, file), join(clone, file)); // with its mode: bins stay executable
    } else {
      rmSync(join(clone, file), { force: true });
    }
  }
});

afterAll(() => {
  if (clone) rmSync(clone, { recursive: true, force: true });
});

describe("a fresh clone", () => {
  it("installs with no warning a newcomer cannot act on (bins linked before any build, no build-script box)", () => {
    const install = spawnSync("pnpm", ["install", "--frozen-lockfile", "--prefer-offline"], {
      cwd: clone,
      env: newcomerEnv(),
      encoding: "utf8",
    });
    const output = install.stdout + install.stderr;
    expect(install.status, output).toBe(0);
    expect(output).not.toMatch(/Failed to create bin/);
    expect(output).not.toMatch(/Ignored build scripts/);
    expect(output).not.toMatch(/\bWARN\b/);
    // The sandbox's bin is linked for its dependents although nothing is built yet.
    expect(existsSync(join(clone, "tools", "start", "node_modules", ".bin", "tenant-sandbox"))).toBe(true);
    const unbuilt = spawnSync(join(clone, "tools", "start", "node_modules", ".bin", "tenant-sandbox"), ["--version"], {
      encoding: "utf8",
    });
    expect(unbuilt.stderr).toMatch(/run `pnpm build` first/);
    expect(unbuilt.status).toBe(1);
  }, 180_000);

  it("stops `pnpm start` on Ctrl-C with status 0 and no ELIFECYCLE", async () => {
    // Its own process group, as a terminal's foreground job: Ctrl-C sends SIGINT to every process in it.
    const start = spawn("pnpm", ["start"], {
      cwd: clone,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: newcomerEnv({
        DOCS_PORT: "0",
        SANDBOX_PORT: "0",
        WEB_PORT: "0",
        TURBO_CACHE_DIR: join(root, ".turbo", "cache"),
        TURBO_CACHE: "local:r",
      }),
    });
    let output = "";
    start.stdout!.on("data", (chunk) => (output += chunk));
    start.stderr!.on("data", (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      start.once("close", (code, signal) => resolve({ code, signal })),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        // A cache miss (a build this run has not cached yet) builds in the clone: minutes, not seconds.
        const timer = setTimeout(() => reject(new Error(`pnpm start printed no URLs:\n${output}`)), 240_000);
        start.stdout!.on("data", () => {
          if (!/Press Ctrl-C to stop\.\s*$/.test(output)) return;
          clearTimeout(timer);
          resolve();
        });
        void exited.then(() => reject(new Error(`pnpm start exited before it was ready:\n${output}`)));
      });
      const sandbox = /✔ Sandbox tenant: (\S+)/.exec(output)?.[1];
      expect(sandbox, output).toBeDefined();
      expect((await fetch(`${sandbox}/__sandbox/health`)).status).toBe(200);

      process.kill(-start.pid!, "SIGINT");
      const { code, signal } = await exited;
      expect(output).not.toMatch(/ELIFECYCLE|Command failed/);
      expect({ code, signal }, output).toEqual({ code: 0, signal: null });
      await expect(fetch(`${sandbox}/__sandbox/health`)).rejects.toThrow();
    } finally {
      try {
        process.kill(-start.pid!, "SIGKILL"); // whatever of the group is left when an expectation failed
      } catch {
        /* all gone, as expected */
      }
    }
  }, 270_000);
});
