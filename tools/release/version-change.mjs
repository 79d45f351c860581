// Whether a push versioned a package that npm never publishes (the Python SDK, the Go module):
// changesets bumps the version in its private package.json, and a merged "Version packages" pull
// request is the push that moves it. Each package's release script (python-release.mjs,
// go-release.mjs) asks this, then does what its own registry needs with the new version.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The version of `<dir>/package.json` at `commit` in the git repository at `cwd`, or null when that
 * commit or file cannot be read (no commit given, the all-zero commit of a first push, a commit a
 * force push dropped, a package that did not exist yet).
 */
export function versionAt(cwd, dir, commit) {
  if (!/^[0-9a-f]{7,40}$/i.test(commit ?? "") || /^0+$/.test(commit)) return null;
  try {
    const text = execFileSync("git", ["show", `${commit}:${dir}/package.json`], {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return JSON.parse(text).version ?? null;
  } catch {
    return null;
  }
}

/**
 * `{ version, previous, changed }` for the package in `dir` (relative to `cwd`): its version in the
 * work tree, its version before the push (`previous` when given, else the one at the commit
 * `before`, null when unreadable), and whether the push changed it. An unreadable version before
 * counts as changed: each release script refuses to release a version its registry already has.
 */
export function versionChange({ cwd, dir, before, previous = versionAt(cwd, dir, before) }) {
  const version = JSON.parse(readFileSync(join(cwd, dir, "package.json"), "utf8")).version;
  return { version, previous, changed: previous !== version };
}
