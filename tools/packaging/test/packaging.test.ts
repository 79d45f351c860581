// The published packages as a user gets them: publint --strict and attw on each, then their
// `pnpm pack` tarballs installed into fresh consumer projects (ESM JavaScript, CommonJS through
// require, TypeScript with moduleResolution node16 and with bundler), each of which compiles and
// runs the sign-in flow against the sandbox from its own tarball.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const bin = (name: string) => join(here, "..", "node_modules", ".bin", name);
const packages = {
  "@tenant-integration/openapi": "spec",
  "@tenant-integration/types": "packages/types",
  "@tenant-integration/token-manager": "packages/token-manager",
  "@tenant-integration/client": "packages/client",
  "@tenant-integration/sandbox": "packages/sandbox",
  "@tenant-integration/token-store-redis": "packages/token-store-redis",
} as const;
type Name = keyof typeof packages;

let work: string;
const tarballs = {} as Record<Name, string>;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "consumers-"));
  const packs = join(work, "packs");
  mkdirSync(packs);
  for (const [name, dir] of Object.entries(packages) as [Name, string][]) {
    const before = new Set(readdirSync(packs));
    execFileSync("pnpm", ["pack", "--pack-destination", packs], { cwd: join(root, dir), stdio: "pipe" });
    const made = readdirSync(packs).find((f) => !before.has(f));
    if (!made) throw new Error(`pnpm pack made no tarball for ${name}`);
    tarballs[name] = join(packs, made);
  }
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.each(Object.entries(packages))("%s", (_name, dir) => {
  it("passes publint --strict", () => {
    const run = spawnSync(bin("publint"), ["--strict"], { cwd: join(root, dir), encoding: "utf8" });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/All good!/);
  }, 60_000);
});

// The contract package ships only YAML and JSON, so attw (which checks JavaScript and types) has
// nothing to say about it; publint covers it above.
const withCode = (Object.keys(packages) as Name[]).filter((n) => n !== "@tenant-integration/openapi");
describe.each(withCode)("%s", (name) => {
  it("passes attw on its packed tarball (types right for node10, node16 CJS and ESM, bundler)", () => {
    const run = spawnSync(bin("attw"), [tarballs[name], "--format", "table-flipped"], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/No problems found/);
  }, 60_000);
});

function consumer(kind: string, files: Record<string, string>, extra: { type?: "module"; devDependencies?: Record<string, string> } = {}) {
  const dir = join(work, kind);
  mkdirSync(dir);
  const dependencies = Object.fromEntries(
    (["@tenant-integration/types", "@tenant-integration/token-manager", "@tenant-integration/client", "@tenant-integration/sandbox"] as Name[]).map((n) => [n, `file:${tarballs[n]}`]),
  );
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: `consumer-${kind}`,
      private: true,
      ...(extra.type ? { type: extra.type } : {}),
      dependencies,
      devDependencies: extra.devDependencies ?? {},
      // The packages depend on each other by version; point those at the tarballs too.
      overrides: { "@tenant-integration/types": `file:${tarballs["@tenant-integration/types"]}` },
    }),
  );
  for (const [file, source] of Object.entries(files)) copyFileSync(join(here, "..", "fixtures", source), join(dir, file));
  const install = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dir, encoding: "utf8" });
  expect(install.status, install.stdout + install.stderr).toBe(0);
  return dir;
}

function run(dir: string, command: string, args: string[]) {
  const result = spawnSync(command, args, { cwd: dir, encoding: "utf8", timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const typescript = { typescript: "5.9.3", "@types/node": "20.19.43" };

describe("fresh consumer projects install the tarballs and run the flow against the sandbox", () => {
  it("ESM JavaScript (import)", () => {
    const dir = consumer("esm", { "index.mjs": "flow.mjs" });
    const { status, output } = run(dir, process.execPath, ["index.mjs"]);
    expect(output).toMatch(/consumer flow ok \(esm, 37 scopes\)/);
    expect(status).toBe(0);
  }, 180_000);

  it("CommonJS (require)", () => {
    const dir = consumer("cjs", { "index.cjs": "flow.cjs" });
    const { status, output } = run(dir, process.execPath, ["index.cjs"]);
    expect(output).toMatch(/consumer flow ok \(cjs, 37 scopes\)/);
    expect(output).not.toMatch(/ExperimentalWarning/);
    expect(status).toBe(0);
  }, 180_000);

  it.each([
    ["node16", { module: "node16", moduleResolution: "node16" }],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }],
  ])("TypeScript with moduleResolution %s", (resolution, options) => {
    const dir = consumer(`ts-${resolution}`, { "index.ts": "flow.ts" }, { type: "module", devDependencies: typescript });
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { ...options, target: "es2022", strict: true, outDir: "out", types: ["node"], skipLibCheck: false }, files: ["index.ts"] }),
    );
    const compiled = run(dir, join(dir, "node_modules", ".bin", "tsc"), ["-p", "."]);
    expect(compiled.output).toBe("");
    expect(compiled.status).toBe(0);
    const { status, output } = run(dir, process.execPath, ["out/index.js"]);
    expect(output).toMatch(/consumer flow ok \(ts, 37 scopes\)/);
    expect(status).toBe(0);
  }, 180_000);
});
