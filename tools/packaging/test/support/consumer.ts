// A fresh consumer project in this run's scratch folder: a package.json that depends on the packed
// tarballs (file:), fixture files copied in, `npm install` run as a user would.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, inject } from "vitest";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures");

/** The packages a consumer project installs from their tarballs. */
export const consumed = [
  "@tenant-integration/types",
  "@tenant-integration/internal",
  "@tenant-integration/token-manager",
  "@tenant-integration/client",
  "@tenant-integration/sandbox",
] as const;

/** Pinned versions of the TypeScript toolchain a consumer compiles with. */
export const typescript = { typescript: "5.9.3", "@types/node": "20.19.43" };

export interface ConsumerOptions {
  /** Project file → fixture file (relative to tools/packaging/fixtures). */
  files: Record<string, string>;
  type?: "module";
  /** Registry packages, pinned. */
  devDependencies?: Record<string, string>;
}

/** Creates and installs the consumer project `kind`; returns its folder. */
export function consumerProject(kind: string, options: ConsumerOptions): string {
  const packed = inject("packed");
  const tarball = (name: string) => {
    const found = packed[name];
    if (!found) throw new Error(`${name} was not packed`);
    return `file:${found.tarball}`;
  };
  const dir = join(inject("work"), kind);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: `consumer-${kind}`,
      private: true,
      ...(options.type ? { type: options.type } : {}),
      dependencies: Object.fromEntries(consumed.map((name) => [name, tarball(name)])),
      devDependencies: options.devDependencies ?? {},
      // The packages depend on each other by version; point those at the tarballs too.
      overrides: Object.fromEntries(consumed.map((name) => [name, tarball(name)])),
    }),
  );
  for (const [file, source] of Object.entries(options.files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(fixtures, source), join(dir, file));
  }
  const install = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd: dir,
    encoding: "utf8",
  });
  expect(install.status, install.stdout + install.stderr).toBe(0);
  return dir;
}

/** Runs a command in `dir`; output is stdout then stderr. */
export function run(dir: string, command: string, args: string[], timeoutMs = 180_000) {
  const result = spawnSync(command, args, { cwd: dir, encoding: "utf8", timeout: timeoutMs });
  // A command killed at the timeout has no status and may have printed nothing: say so.
  const stopped = result.error ? `\n${command} ${args.join(" ")}: ${result.error.message}` : "";
  return { status: result.status, output: `${result.stdout}${result.stderr}${stopped}` };
}
