#!/usr/bin/env node
// Whether a push releases the Python package: the release workflow publishes packages/python to PyPI
// only when the version in its package.json (which changesets bumps, and the wheel takes) differs
// from the one at the commit before the push, i.e. when a "Version packages" pull request that
// versioned it was merged.
//
//   node tools/release/python-release.mjs <commit before the push>
//
// prints `changed=true|false` and `version=<x.y.z>`, the lines the workflow appends to
// $GITHUB_OUTPUT. A commit before that cannot be read (a first push, a force push that dropped it)
// counts as changed: the upload skips a version PyPI already has.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const manifestPath = "packages/python/package.json";

/** The version of packages/python/package.json at `commit` in the repository at `cwd`, or null. */
function versionAt(cwd, commit) {
  if (!/^[0-9a-f]{7,40}$/i.test(commit ?? "") || /^0+$/.test(commit)) return null;
  try {
    const text = execFileSync("git", ["show", `${commit}:${manifestPath}`], {
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
 * `{ version, previous, changed }`: the Python package's version in the work tree at `cwd`, the one
 * at `before` (null when that commit or file cannot be read), and whether this push releases it.
 */
export function pythonRelease({ cwd, before }) {
  const version = JSON.parse(readFileSync(join(cwd, manifestPath), "utf8")).version;
  const previous = versionAt(cwd, before);
  return { version, previous, changed: previous !== version };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { version, previous, changed } = pythonRelease({ cwd: process.cwd(), before: process.argv[2] });
  console.error(`@tenant-integration/python: ${previous ?? "(unknown)"} before the push, ${version} now`);
  console.log(`changed=${changed}`);
  console.log(`version=${version}`);
}
