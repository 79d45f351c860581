// The Go module is versioned by changesets like the Python SDK (a changeset naming
// @tenant-integration/go bumps packages/go/package.json) and released by a git tag named after its
// folder, packages/go/vX.Y.Z, of that version (tools/release/go-release.mjs). Checked on a scratch git
// repository with the same layout: which tag a push releases, and when it releases none.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compareVersions, goRelease, moduleTags } from "../../release/go-release.mjs";

const repo = mkdtempSync(join(tmpdir(), "go-release-"));
const git = (...args: string[]): string =>
  execFileSync(
    "git",
    ["-c", "user.name=test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false", ...args],
    { cwd: repo, encoding: "utf8" },
  ).trim();

/** Writes `files` (path to text), commits them, and returns the commit. */
function commit(files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) writeFileSync(join(repo, file), text);
  git("add", "-A");
  git("commit", "-q", "--allow-empty", "-m", Object.keys(files).join(", ") || "empty");
  return git("rev-parse", "HEAD");
}
/** packages/<dir>/package.json at `version`, as changesets writes it. */
const manifest = (name: string, version: string): string =>
  `${JSON.stringify({ name, version, private: true }, null, 2)}\n`;
const goAt = (version: string) => ({ "packages/go/package.json": manifest("@tenant-integration/go", version) });
const zeros = "0".repeat(40);

mkdirSync(join(repo, "packages", "go"), { recursive: true });
mkdirSync(join(repo, "packages", "python"), { recursive: true });
git("init", "-q");
const unreleased = commit({
  "packages/go/go.mod": "module github.com/tenant-integration/sdk/packages/go\n\ngo 1.26.0\n",
  ...goAt("0.0.0"),
  "packages/python/package.json": manifest("@tenant-integration/python", "0.0.0"),
});
// A "Version packages" merge that versioned the Python SDK to 0.3.0 and the Go module to 0.1.0.
const firstRelease = commit({
  ...goAt("0.1.0"),
  "packages/python/package.json": manifest("@tenant-integration/python", "0.3.0"),
});

afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("go-release.mjs: which tag a push releases the Go module by", () => {
  it("tags packages/go/v<the Go package's own version> on the push that changesets moved it", () => {
    const release = goRelease({ cwd: repo, before: unreleased });
    expect(release).toMatchObject({
      version: "0.1.0",
      previous: "0.0.0",
      tag: "packages/go/v0.1.0",
      previousTag: null,
      changed: true,
      why: "from 0.0.0; the module's first tag",
      module: "github.com/tenant-integration/sdk/packages/go",
    });
  });

  it("never takes another package's version (the Python SDK is at 0.3.0 here)", () => {
    expect(goRelease({ cwd: repo, before: unreleased }).tag).not.toBe("packages/go/v0.3.0");
  });

  it("releases nothing on a push that left the version as it was", () => {
    commit({ "README.md": "a change elsewhere" });
    expect(goRelease({ cwd: repo, before: firstRelease })).toMatchObject({
      changed: false,
      why: "the module's version did not change (0.1.0)",
    });
  });

  it("releases nothing while the module was never versioned (0.0.0), whatever the commit before", () => {
    git("checkout", "-q", unreleased);
    try {
      expect(goRelease({ cwd: repo, before: zeros })).toMatchObject({
        changed: false,
        why: "nothing is released yet (0.0.0)",
      });
    } finally {
      git("checkout", "-q", "-");
    }
  });

  it("refuses a tag that exists already: a rerun, or a commit before the push that cannot be read", () => {
    git("tag", "packages/go/v0.1.0");
    expect(moduleTags(repo)).toEqual(["packages/go/v0.1.0"]);
    expect(goRelease({ cwd: repo, before: unreleased })).toMatchObject({
      changed: false,
      why: "packages/go/v0.1.0 exists already",
    });
    expect(goRelease({ cwd: repo, before: zeros })).toMatchObject({ previous: null, changed: false });
  });

  it("tags the next version after the module's latest tag, even when the commit before is unknown", () => {
    commit(goAt("0.2.0"));
    expect(goRelease({ cwd: repo, before: firstRelease })).toMatchObject({
      tag: "packages/go/v0.2.0",
      previousTag: "packages/go/v0.1.0",
      changed: true,
      why: "from 0.1.0; after packages/go/v0.1.0",
    });
    expect(goRelease({ cwd: repo, before: zeros })).toMatchObject({
      changed: true,
      why: "the version before the push is unknown; after packages/go/v0.1.0",
    });
  });

  it("takes the version before the push when given, and the tags of another checkout (the rehearsal's copy)", () => {
    const copy = mkdtempSync(join(tmpdir(), "go-release-copy-"));
    try {
      mkdirSync(join(copy, "packages", "go"), { recursive: true });
      writeFileSync(join(copy, "packages", "go", "go.mod"), "module github.com/tenant-integration/sdk/packages/go\n");
      writeFileSync(join(copy, "packages", "go", "package.json"), manifest("@tenant-integration/go", "0.1.0"));
      expect(goRelease({ cwd: copy, previous: "0.0.0" })).toMatchObject({ changed: true, previousTag: null });
      expect(goRelease({ cwd: copy, previous: "0.0.0", repo })).toMatchObject({
        changed: false,
        why: "packages/go/v0.1.0 exists already",
      });
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it("refuses a version older than the module's latest tag", () => {
    git("tag", "packages/go/v0.3.0");
    try {
      expect(() => goRelease({ cwd: repo, before: firstRelease })).toThrow(
        "packages/go/v0.2.0 would be older than the module's latest tag, packages/go/v0.3.0",
      );
    } finally {
      git("tag", "-d", "packages/go/v0.3.0");
    }
  });

  it("refuses v2 and later while the module path has no /v2 suffix, and tags it once go.mod has one", () => {
    const v2 = commit(goAt("2.0.0"));
    expect(() => goRelease({ cwd: repo, before: `${v2}~1` })).toThrow(/needs the module path to end in \/v2/);
    commit({ "packages/go/go.mod": "module github.com/tenant-integration/sdk/packages/go/v2\n\ngo 1.26.0\n" });
    expect(goRelease({ cwd: repo, previous: "0.2.0" })).toMatchObject({
      tag: "packages/go/v2.0.0",
      module: "github.com/tenant-integration/sdk/packages/go/v2",
      changed: true,
    });
  });

  it("orders versions as semantic versions, pre-releases first", () => {
    expect(["0.10.0", "0.9.0", "1.0.0-rc.1", "1.0.0"].sort(compareVersions)).toEqual([
      "0.9.0",
      "0.10.0",
      "1.0.0-rc.1",
      "1.0.0",
    ]);
  });

  it("prints the lines the workflow appends to $GITHUB_OUTPUT, given the commit before the push", () => {
    git("checkout", "-q", firstRelease);
    git("tag", "-d", "packages/go/v0.1.0");
    const script = join(import.meta.dirname, "..", "..", "release", "go-release.mjs");
    const out = execFileSync("node", [script, unreleased], {
      cwd: repo,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    expect(out).toBe("changed=true\ntag=packages/go/v0.1.0\nversion=0.1.0\n");
  });
});
