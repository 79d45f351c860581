// The Go module is released by a git tag named after its folder, packages/go/vX.Y.Z, with the
// release's version (tools/release/go-release.mjs). Checked on a scratch git repository with the same
// layout: which tag a release pushes, and when it pushes none.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compareVersions, goRelease } from "../../release/go-release.mjs";

const repo = mkdtempSync(join(tmpdir(), "go-release-"));
const git = (...args: string[]): string =>
  execFileSync(
    "git",
    ["-c", "user.name=test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false", ...args],
    { cwd: repo, encoding: "utf8" },
  ).trim();

function commit(file: string, text: string): void {
  writeFileSync(join(repo, file), text);
  git("add", "-A");
  git("commit", "-q", "-m", `${file}: ${text.slice(0, 20)}`);
}

mkdirSync(join(repo, "packages", "go"), { recursive: true });
git("init", "-q");
commit("packages/go/go.mod", "module github.com/tenant-integration/sdk/packages/go\n\ngo 1.26.0\n");

afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("go-release.mjs: which tag releases the Go module", () => {
  it("tags the module's first release packages/go/v<the highest version of the release>", () => {
    const release = goRelease({ cwd: repo, versions: ["0.1.0", "0.10.0", "0.9.3"] });
    expect(release).toMatchObject({ tag: "packages/go/v0.10.0", version: "0.10.0", previousTag: null, changed: true });
    expect(release.module).toBe("github.com/tenant-integration/sdk/packages/go");
  });

  it("pushes no tag while nothing is released (every package still 0.0.0)", () => {
    expect(goRelease({ cwd: repo, versions: ["0.0.0", "0.0.0"] })).toMatchObject({
      changed: false,
      why: "nothing is released yet (0.0.0)",
    });
  });

  it("pushes no tag when packages/go has not changed since its last tag, or the tag exists", () => {
    git("tag", "packages/go/v0.1.0");
    commit("README.md", "a change elsewhere");
    expect(goRelease({ cwd: repo, versions: ["0.2.0"] })).toMatchObject({
      changed: false,
      previousTag: "packages/go/v0.1.0",
    });
    expect(goRelease({ cwd: repo, versions: ["0.1.0"] })).toMatchObject({
      changed: false,
      why: "packages/go/v0.1.0 exists already",
    });
  });

  it("tags again once packages/go changed", () => {
    commit("packages/go/doc.go", "package tenantintegration\n");
    expect(goRelease({ cwd: repo, versions: ["0.2.0", "0.1.1"] })).toMatchObject({
      tag: "packages/go/v0.2.0",
      changed: true,
      previousTag: "packages/go/v0.1.0",
    });
  });

  it("refuses v2 and later while the module path has no /v2 suffix", () => {
    expect(() => goRelease({ cwd: repo, versions: ["2.0.0"] })).toThrow(/\/v2/);
  });

  it("orders versions as semantic versions, pre-releases first", () => {
    expect(["0.10.0", "0.9.0", "1.0.0-rc.1", "1.0.0"].sort(compareVersions)).toEqual([
      "0.9.0",
      "0.10.0",
      "1.0.0-rc.1",
      "1.0.0",
    ]);
  });

  it("prints the lines the workflow appends to $GITHUB_OUTPUT", () => {
    const script = join(import.meta.dirname, "..", "..", "release", "go-release.mjs");
    const out = execFileSync("node", [script], {
      cwd: join(import.meta.dirname, "..", "..", ".."),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    expect(out).toMatch(/^changed=(true|false)\ntag=packages\/go\/v\d+\.\d+\.\d+\S*\nversion=\d+\.\d+\.\d+\S*\n$/);
  });
});
