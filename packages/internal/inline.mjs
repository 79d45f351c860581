#!/usr/bin/env node
// Copies the shared sources (packages/internal/src/*.ts, their tests included) into the calling
// package's src/internal/, each under a header naming its origin. Run from a package folder
// (`node ../internal/inline.mjs`) by its build, typecheck and test scripts, and by its vitest
// config. The copies are not committed (the repository's .gitignore lists src/internal/): the one
// source is packages/internal/src, so the packages cannot drift apart. See README.md.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const sourceDir = join(dirname(fileURLToPath(import.meta.url)), "src");

/** The header of a copy: where it comes from, and not to edit it. */
const header = (file) =>
  `// Generated from packages/internal/src/${file} by packages/internal/inline.mjs: do not edit here, edit that file.\n`;

/**
 * Brings `<packageDir>/src/internal/` in line with packages/internal/src: writes each copy whose
 * content differs (so unchanged files keep their time stamps) and removes files that no longer have
 * a source. Returns the names of the files it wrote or removed.
 */
export function inline(packageDir) {
  const target = join(packageDir, "src", "internal");
  mkdirSync(target, { recursive: true });
  const sources = readdirSync(sourceDir).filter((file) => file.endsWith(".ts"));
  const changed = [];
  for (const file of sources) {
    const text = header(file) + readFileSync(join(sourceDir, file), "utf8");
    const path = join(target, file);
    if (existsSync(path) && readFileSync(path, "utf8") === text) continue;
    writeFileSync(path, text);
    changed.push(file);
  }
  for (const file of readdirSync(target)) {
    if (sources.includes(file)) continue;
    rmSync(join(target, file), { recursive: true, force: true });
    changed.push(file);
  }
  return changed;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const changed = inline(process.cwd());
  const where = relative(process.cwd(), join(process.cwd(), "src", "internal"));
  console.log(
    changed.length === 0 ? `${where}/ is up to date` : `${where}/: ${changed.map((file) => basename(file)).join(", ")}`,
  );
}
