#!/usr/bin/env node
// Adds a CommonJS build beside a package's ESM build: every dist/**/*.js (compiled by tsc) is
// transformed by esbuild to CommonJS under dist/cjs/, the declarations are copied beside them, and
// dist/cjs/package.json marks the folder "type": "commonjs" so Node and TypeScript read both the
// .js and the .d.ts there as CommonJS. Run from the package folder after `tsc`.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { transform } from "esbuild";

const dist = join(process.cwd(), "dist");
const out = join(dist, "cjs");
const skip = new Set((process.argv.find((a) => a.startsWith("--skip="))?.slice(7) ?? "").split(",").filter(Boolean));

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path !== out) yield* files(path);
    } else yield path;
  }
}

rmSync(out, { recursive: true, force: true });
let count = 0;
for (const file of files(dist)) {
  const rel = relative(dist, file);
  if (skip.has(rel.replace(/\.(d\.ts|js|js\.map|d\.ts\.map)$/, ""))) continue;
  const target = join(out, rel);
  if (file.endsWith(".js")) {
    const { code } = await transform(readFileSync(file, "utf8"), { format: "cjs", target: "es2022", platform: "neutral", sourcefile: rel });
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, code);
    count++;
  } else if (file.endsWith(".d.ts")) {
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
}
writeFileSync(join(out, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
console.log(`CommonJS build: ${count} modules in ${relative(process.cwd(), out)}/`);
