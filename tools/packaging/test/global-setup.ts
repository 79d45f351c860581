// Packs every published package once per run (`pnpm pack`, as the release does) and unpacks each
// tarball, so every test file reads the same tarballs: what users would download.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { publishedPackages, root } from "../published.mjs";

/** One packed package. */
export interface Packed {
  /** Folder in the repository, relative to the root: "packages/client". */
  dir: string;
  /** The .tgz `pnpm pack` wrote. */
  tarball: string;
  /** Where that tarball was unpacked (its `package/` folder). */
  unpacked: string;
  /** Every file in the tarball, relative to `unpacked`, forward slashes. */
  files: string[];
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Scratch folder of this run (consumer projects go below it). */
    work: string;
    /** Every published package, by name. */
    packed: Record<string, Packed>;
  }
}

function listFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

export default function setup({ provide }: TestProject) {
  const work = mkdtempSync(join(tmpdir(), "packaging-"));
  const packs = join(work, "packs");
  mkdirSync(packs);
  const packed: Record<string, Packed> = {};
  for (const { dir, manifest } of publishedPackages()) {
    const before = new Set(readdirSync(packs));
    execFileSync("pnpm", ["pack", "--pack-destination", packs], { cwd: join(root, dir), stdio: "pipe" });
    const made = readdirSync(packs).find((file) => !before.has(file));
    if (!made) throw new Error(`pnpm pack made no tarball for ${manifest.name}`);
    const into = join(work, "unpacked", made.replace(/\.tgz$/, ""));
    mkdirSync(into, { recursive: true });
    execFileSync("tar", ["-xzf", join(packs, made), "-C", into]);
    const unpacked = join(into, "package");
    packed[manifest.name] = { dir, tarball: join(packs, made), unpacked, files: listFiles(unpacked).sort() };
  }
  provide("work", work);
  provide("packed", packed);
  return () => rmSync(work, { recursive: true, force: true });
}
