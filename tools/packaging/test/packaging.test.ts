// The published packages as a user gets them: publint --strict and attw on each, then their
// `pnpm pack` tarballs installed into fresh consumer projects (ESM JavaScript, CommonJS through
// require, TypeScript with moduleResolution node16 and with bundler), each of which compiles and
// runs the sign-in flow against the sandbox from its own tarball.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, inject, it } from "vitest";
import { consumerProject, run, typescript } from "./support/consumer.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const bin = (name: string) => join(here, "..", "node_modules", ".bin", name);
// Every published package, packed once for the run by global-setup.ts.
const packed = inject("packed");

describe.each(Object.values(packed).map(({ dir }) => dir))("%s", (dir) => {
  it("passes publint --strict", () => {
    const run = spawnSync(bin("publint"), ["--strict"], { cwd: join(root, dir), encoding: "utf8" });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/All good!/);
  }, 60_000);
});

// The contract package ships only YAML and JSON, so attw (which checks JavaScript and types) has
// nothing to say about it; publint covers it above.
const withCode = Object.keys(packed).filter((n) => n !== "@tenant-integration/openapi");
describe.each(withCode)("%s", (name) => {
  it("passes attw on its packed tarball (types right for node10, node16 CJS and ESM, bundler)", () => {
    const run = spawnSync(bin("attw"), [packed[name]!.tarball, "--format", "table-flipped"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/No problems found/);
  }, 60_000);
});

describe("fresh consumer projects install the tarballs and run the flow against the sandbox", () => {
  it("ESM JavaScript (import)", () => {
    const dir = consumerProject("esm", { files: { "index.mjs": "flow.mjs" } });
    const { status, output } = run(dir, process.execPath, ["index.mjs"]);
    expect(output).toMatch(/consumer flow ok \(esm, 37 scopes\)/);
    expect(status).toBe(0);
  }, 180_000);

  it("CommonJS (require)", () => {
    const dir = consumerProject("cjs", { files: { "index.cjs": "flow.cjs" } });
    const { status, output } = run(dir, process.execPath, ["index.cjs"]);
    expect(output).toMatch(/consumer flow ok \(cjs, 37 scopes\)/);
    expect(output).not.toMatch(/ExperimentalWarning/);
    expect(status).toBe(0);
  }, 180_000);

  it.each([
    ["node16", { module: "node16", moduleResolution: "node16" }],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }],
  ])(
    "TypeScript with moduleResolution %s",
    (resolution, options) => {
      const dir = consumerProject(`ts-${resolution}`, {
        files: { "index.ts": "flow.ts" },
        type: "module",
        devDependencies: typescript,
      });
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            ...options,
            target: "es2022",
            strict: true,
            outDir: "out",
            types: ["node"],
            skipLibCheck: false,
          },
          files: ["index.ts"],
        }),
      );
      const compiled = run(dir, join(dir, "node_modules", ".bin", "tsc"), ["-p", "."]);
      expect(compiled.output).toBe("");
      expect(compiled.status).toBe(0);
      const { status, output } = run(dir, process.execPath, ["out/index.js"]);
      expect(output).toMatch(/consumer flow ok \(ts, 37 scopes\)/);
      expect(status).toBe(0);
    },
    180_000,
  );
});
