// What is inside each tarball, file by file: the LICENSE, the metadata, source maps that resolve,
// and READMEs that speak to the package's user (every file they name is in the tarball, every
// other reference is an absolute URL).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { repositoryUrl, root } from "../published.mjs";
import { contributorCommands, namedFiles, relativeLinks } from "./support/readme-references.js";

const packed = inject("packed");

describe.each(Object.entries(packed))("the tarball of %s", (name, { dir, unpacked, files }) => {
  const read = (file: string) => readFileSync(join(unpacked, file), "utf8");
  const has = (file: string) => files.includes(file);

  it("ships the root LICENSE", () => {
    expect(has("LICENSE")).toBe(true);
    expect(read("LICENSE")).toBe(readFileSync(join(root, "LICENSE"), "utf8"));
  });

  it("has repository, homepage and bugs in the package.json npm receives", () => {
    const manifest = JSON.parse(read("package.json"));
    expect(manifest.repository).toEqual({ type: "git", url: repositoryUrl, directory: dir });
    expect(manifest.homepage).toMatch(/^https:\/\/github\.com\//);
    expect(manifest.bugs).toBeDefined();
  });

  it("has no sourceMappingURL pointing at a file that is not in the tarball", () => {
    const missing: string[] = [];
    for (const file of files.filter((f) => /\.(c|m)?js$|\.d\.(c|m)?ts$|\.css$/.test(f))) {
      for (const [, url] of read(file).matchAll(/[#@] sourceMappingURL=([^\s*]+)/g)) {
        if (url!.startsWith("data:")) continue;
        const target = posix.join(posix.dirname(file), url!);
        if (!has(target)) missing.push(`${file} → ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("has source maps whose sources are in the tarball (so they lead to real code)", () => {
    const missing: string[] = [];
    for (const file of files.filter((f) => f.endsWith(".map"))) {
      const map = JSON.parse(read(file)) as {
        sources: string[];
        sourceRoot?: string;
        sourcesContent?: (string | null)[];
      };
      map.sources.forEach((source, i) => {
        if (typeof map.sourcesContent?.[i] === "string") return;
        const target = posix.join(posix.dirname(file), map.sourceRoot ?? "", source);
        if (!has(target)) missing.push(`${file} → ${target}`);
      });
    }
    expect(missing).toEqual([]);
  });

  const readmes = files.filter((f) => /(^|\/)README\.md$/i.test(f));
  it.each(readmes)("%s links and names only files in the tarball", (readme) => {
    const text = read(readme);
    const folder = readdirSync(join(root, dir));
    const links = relativeLinks(text).map((link) => posix.join(posix.dirname(readme), link).replace(/\/$/, ""));
    const named = namedFiles(text, name, folder).map((file) => file.replace(/\/$/, ""));
    const absent = [...links, ...named].filter((file) => !has(file) && !files.some((f) => f.startsWith(`${file}/`)));
    expect(absent, `${dir}/${readme}: link these by absolute URL or move them to CONTRIBUTING.md`).toEqual([]);
  });

  it("has a README that shows its user no repository scripts (those live in CONTRIBUTING.md)", () => {
    expect(has("README.md")).toBe(true);
    expect(contributorCommands(read("README.md"))).toEqual([]);
    expect(has("CONTRIBUTING.md")).toBe(false);
  });
});

describe("the CommonJS source maps", () => {
  // Regression guard for tools/build/cjs.mjs: the CommonJS maps are tsc's composed with the esbuild
  // transform, so a line of dist/cjs/*.js must land on the .ts line that did it, not merely on a file.
  it("lead a require() user's stack trace to the line of the shipped src/*.ts that threw", () => {
    const { unpacked } = inject("packed")["@tenant-integration/token-manager"]!;
    const script = `require("./dist/cjs/index.js").deriveCodeChallenge("not a verifier").catch((e) => console.log(e.stack))`;
    const { stdout, stderr } = spawnSync(process.execPath, ["--enable-source-maps", "-e", script], {
      cwd: unpacked,
      encoding: "utf8",
    });
    // Each frame in src/ (`…/src/errors.ts:172:9`), read back as the source line it names.
    const frames = [...stdout.matchAll(/\/src\/([\w/-]+\.ts):(\d+):\d+/g)].map(([, file, line]) => {
      const lines = readFileSync(join(unpacked, "src", file!), "utf8").split("\n");
      return lines[Number(line) - 1];
    });
    expect(frames.length, stdout + stderr).toBeGreaterThanOrEqual(2);
    expect(frames[0]).toMatch(/throw new TokenManagerError/);
    expect(frames[1]).toMatch(/fail\("INVALID_VERIFIER"\)/);
  });
});

describe("the README checks", () => {
  const folder = ["README.md", "src", "scripts", "test", "paths", "dist", "package.json", "node_modules"];

  it("catch a folder or test file of the repository named in a code span", () => {
    const text =
      "- `scripts/`: the lint pipeline.\n- `src/leak.test.ts` runs every path.\n- `application/json` and `/api/v1/auth/user` are not files.";
    expect(namedFiles(text, "@x/y", folder)).toEqual(["scripts/", "src/leak.test.ts"]);
  });

  it("read node_modules/<package>/ as the package's own folder and skip fenced code", () => {
    const text = "Point a tool at `node_modules/@x/y/dist/openapi.yaml`.\n\n```sh\ncat test/a.ts\n```\n";
    expect(namedFiles(text, "@x/y", folder)).toEqual(["dist/openapi.yaml"]);
  });

  it("catch relative links and leave absolute URLs and anchors alone", () => {
    const text =
      "[guide](CONTRIBUTING.md), [a](#options), [b](https://example.test/x), [c](./docs/x.md#part)\n\n[ref]: ../LICENSE\n";
    expect(relativeLinks(text)).toEqual(["CONTRIBUTING.md", "./docs/x.md", "../LICENSE"]);
  });

  it("catch the repository's pnpm scripts but not installing the package", () => {
    expect(contributorCommands("pnpm add -D @x/y\npnpm test       # vitest\n`pnpm --filter @x/y generate`")).toEqual([
      "pnpm test       # vitest",
      "`pnpm --filter @x/y generate`",
    ]);
  });
});
