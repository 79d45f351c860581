#!/usr/bin/env node
// Bundles a package's ESM build: each entry point of its exports map (`dist/<x>.js`, from
// `src/<x>.ts`) becomes one module holding the package's own code, and code that several entry
// points share goes into a chunk they both import (`dist/chunks/`), so a class such as an error is
// defined once. Dependencies stay imports. Run from the package folder, after `tsc` (which, with
// `emitDeclarationOnly`, writes the declarations) and before `build-cjs` (which turns each module
// written here into CommonJS).
//
// Why (issue 41 point 5): Node loads an ES module graph file by file (resolve, read, compile, link),
// and the client and the token manager were 47 files: importing them cost more than Node's own
// start beside openapi-fetch's one file. One module per entry point is what openapi-fetch ships too.
// Browser bundlers still drop what an app does not import, statement by statement
// (`"sideEffects": false`).
//
// Source maps lead to the shipped `src/*.ts`, as tsc's did.
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { build } from "esbuild";

const root = process.cwd();
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** `./dist/x.js` of every `import` condition of the exports map, as `src/x.ts`. */
function entryPoints() {
  const entries = [];
  for (const target of Object.values(manifest.exports ?? {})) {
    const file = target?.import?.default;
    if (typeof file !== "string") continue;
    const match = /^\.\/dist\/(.+)\.js$/.exec(file);
    if (!match) throw new Error(`esm.mjs: an export outside dist/: ${file}`);
    entries.push(join("src", `${match[1]}.ts`));
  }
  if (entries.length === 0) throw new Error("esm.mjs: no entry point in the exports map");
  return entries;
}

const external = [
  ...Object.keys(manifest.dependencies ?? {}),
  ...Object.keys(manifest.peerDependencies ?? {}),
  ...Object.keys(manifest.optionalDependencies ?? {}),
];

/** Every `.js` and `.js.map` under `dir`, but the CommonJS build (build-cjs remakes it). */
function* scripts(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path !== join(root, "dist", "cjs")) yield* scripts(path);
    } else if (/\.js(\.map)?$/.test(entry.name)) yield path;
  }
}

// The previous build's modules go first (tsc writes only declarations): a module that no longer
// exists, or that is bundled now, must not ship.
for (const file of scripts(join(root, "dist"))) rmSync(file);
const result = await build({
  absWorkingDir: root,
  entryPoints: entryPoints(),
  outbase: "src",
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  // `node:` built-ins and every dependency stay imports: the package's own code only.
  external: [...external, ...external.map((name) => `${name}/*`), "node:*"],
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  sourcesContent: false,
  metafile: true,
  logLevel: "warning",
});
const outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith(".js"));
console.log(`ESM build: ${outputs.length} modules (${outputs.map((file) => relative("dist", file)).join(", ")})`);
