// The release workflow publishes the Python package to PyPI only on the push that changed its version
// (tools/release/python-release.mjs, run by the `python-version` job of .github/workflows/release.yml).
// Checked on a scratch git repository with the same file layout.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pythonRelease } from "../../release/python-release.mjs";

const repo = mkdtempSync(join(tmpdir(), "python-release-"));
const git = (...args: string[]): string =>
  execFileSync(
    "git",
    ["-c", "user.name=test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false", ...args],
    { cwd: repo, encoding: "utf8" },
  ).trim();

/** Commits packages/python/package.json at `version` (and `other` beside it); returns the commit. */
function commit(version: string, other = ""): string {
  writeFileSync(
    join(repo, "packages", "python", "package.json"),
    JSON.stringify({ name: "@tenant-integration/python", version, private: true }, null, 2),
  );
  writeFileSync(join(repo, "other.txt"), other);
  git("add", "-A");
  git("commit", "-q", "--allow-empty", "-m", `python ${version} ${other}`);
  return git("rev-parse", "HEAD");
}

mkdirSync(join(repo, "packages", "python"), { recursive: true });
git("init", "-q");
const first = commit("0.0.0");
const unrelated = commit("0.0.0", "a change elsewhere");
const versioned = commit("0.1.0");

afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("python-release.mjs: does this push release the Python package?", () => {
  it("says yes when the push moved packages/python/package.json's version (a Version packages merge)", () => {
    expect(pythonRelease({ cwd: repo, before: unrelated })).toEqual({
      version: "0.1.0",
      previous: "0.0.0",
      changed: true,
    });
  });

  it("says no when the push left the version as it was", () => {
    git("checkout", "-q", unrelated);
    expect(pythonRelease({ cwd: repo, before: first })).toEqual({
      version: "0.0.0",
      previous: "0.0.0",
      changed: false,
    });
    git("checkout", "-q", versioned);
    expect(pythonRelease({ cwd: repo, before: versioned })).toEqual({
      version: "0.1.0",
      previous: "0.1.0",
      changed: false,
    });
  });

  it("says yes when the commit before the push cannot be read (the upload skips a version PyPI has)", () => {
    expect(pythonRelease({ cwd: repo, before: "0000000000000000000000000000000000000000" }).changed).toBe(true);
    expect(pythonRelease({ cwd: repo, before: "1234567890abcdef1234567890abcdef12345678" }).changed).toBe(true);
    expect(pythonRelease({ cwd: repo, before: undefined }).changed).toBe(true);
  });

  it("takes the version before the push when given (the release rehearsal's copy has no history)", () => {
    expect(pythonRelease({ cwd: repo, previous: "0.1.0" })).toEqual({
      version: "0.1.0",
      previous: "0.1.0",
      changed: false,
    });
    expect(pythonRelease({ cwd: repo, previous: "0.0.0", before: versioned }).changed).toBe(true);
  });

  it("prints the lines the workflow appends to $GITHUB_OUTPUT", () => {
    const script = join(import.meta.dirname, "..", "..", "release", "python-release.mjs");
    const out = execFileSync("node", [script, unrelated], {
      cwd: repo,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    expect(out).toBe("changed=true\nversion=0.1.0\n");
  });
});
