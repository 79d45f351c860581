#!/usr/bin/env node
// Adds a CommonJS build beside a package's ESM build: every dist/**/*.js (compiled by tsc) is
// transformed by esbuild to CommonJS under dist/cjs/, the declarations are copied beside them, and
// dist/cjs/package.json marks the folder "type": "commonjs" so Node and TypeScript read both the
// .js and the .d.ts there as CommonJS. Run from the package folder after `tsc`.
//
// Source maps come along, so a CommonJS user's stack traces and "go to definition" land in the
// shipped `src/*.ts` just as an ESM user's do: each .js.map is composed with the transform (esbuild
// reads an inline input map), each .d.ts.map is copied, and in both the `sources` are rewritten for
// the deeper folder. A file without a map (or with one that maps nothing, as for a type-only module)
// gets no `sourceMappingURL` comment, so no shipped file points at a map that is not there.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { transform } from "esbuild";

const dist = join(process.cwd(), "dist");
const out = join(dist, "cjs");
const skip = new Set((process.argv.find((a) => a.startsWith("--skip="))?.slice(7) ?? "").split(",").filter(Boolean));
const mapComment = /^\/\/# sourceMappingURL=(.*)$/m;

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path !== out) yield* files(path);
    } else yield path;
  }
}

/** The map named by `file`'s sourceMappingURL comment, if the comment and the map file both exist. */
function linkedMap(file, text) {
  const url = mapComment.exec(text)?.[1]?.trim();
  if (!url || url.startsWith("data:")) return undefined;
  const path = resolve(dirname(file), url);
  return existsSync(path) ? { path, map: JSON.parse(readFileSync(path, "utf8")) } : undefined;
}

/** `map`, read from `fromDir`, with its sources made relative to `toDir`; forward slashes on every platform. */
function relocate(map, fromDir, toDir) {
  const sourceRoot = map.sourceRoot ?? "";
  const sources = map.sources.map((source) =>
    relative(toDir, resolve(fromDir, sourceRoot, source))
      .split("\\")
      .join("/"),
  );
  return { ...map, sourceRoot: "", sources };
}

function withoutMapComment(text) {
  return text.replace(mapComment, "").trimEnd() + "\n";
}

rmSync(out, { recursive: true, force: true });
let count = 0;
for (const file of files(dist)) {
  const rel = relative(dist, file);
  if (skip.has(rel.replace(/\.(d\.ts|js|js\.map|d\.ts\.map)$/, ""))) continue;
  const target = join(out, rel);
  if (file.endsWith(".js")) {
    const source = readFileSync(file, "utf8");
    // A type-only module's map maps nothing (esbuild would then ignore it): ship no map for it.
    const linked = linkedMap(file, source);
    const input = linked?.map.mappings ? linked : undefined;
    // esbuild composes an inline input map with its own, so the result maps CJS lines to the .ts.
    const inlined = input
      ? source.replace(
          mapComment,
          `//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(input.map)).toString("base64")}`,
        )
      : withoutMapComment(source);
    const { code, map } = await transform(inlined, {
      format: "cjs",
      target: "es2022",
      platform: "neutral",
      sourcefile: rel,
      ...(input ? { sourcemap: "external", sourcesContent: false } : {}),
    });
    mkdirSync(dirname(target), { recursive: true });
    if (input) {
      // esbuild names the sources relative to the input map's folder (dist/…): rebase them onto dist/cjs/….
      const composed = relocate(JSON.parse(map), dirname(input.path), dirname(target));
      const lost = composed.sources.filter((source) => !existsSync(resolve(dirname(target), source)));
      if (lost.length > 0) throw new Error(`${rel}: the CommonJS source map names missing sources: ${lost.join(", ")}`);
      writeFileSync(`${target}.map`, JSON.stringify({ ...composed, file: basename(target) }));
      writeFileSync(target, `${code.trimEnd()}\n//# sourceMappingURL=${basename(target)}.map\n`);
    } else {
      writeFileSync(target, code);
    }
    count++;
  } else if (file.endsWith(".d.ts")) {
    const source = readFileSync(file, "utf8");
    const input = linkedMap(file, source);
    mkdirSync(dirname(target), { recursive: true });
    if (input) {
      writeFileSync(
        join(dirname(target), basename(input.path)),
        JSON.stringify(relocate(input.map, dirname(input.path), dirname(target))),
      );
      copyFileSync(file, target);
    } else {
      writeFileSync(target, withoutMapComment(source));
    }
  }
}
writeFileSync(join(out, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
console.log(`CommonJS build: ${count} modules in ${relative(process.cwd(), out)}/`);
