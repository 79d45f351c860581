#!/usr/bin/env node
// Whether a push releases the Python package: the release workflow publishes packages/python to PyPI
// only when the version in its package.json (which changesets bumps, and the wheel takes) differs
// from the one at the commit before the push, i.e. when a "Version packages" pull request that
// versioned it was merged (version-change.mjs).
//
//   node tools/release/python-release.mjs <commit before the push>
//
// prints `changed=true|false` and `version=<x.y.z>`, the lines the workflow appends to
// $GITHUB_OUTPUT. A commit before that cannot be read (a first push, a force push that dropped it)
// counts as changed: the upload skips a version PyPI already has.
import { pathToFileURL } from "node:url";
import { versionChange } from "./version-change.mjs";

/** The folder of the Python package (PyPI: tenant-integration). */
export const PYTHON_DIR = "packages/python";

/**
 * `{ version, previous, changed }`: the Python package's version in the work tree at `cwd`, the one
 * before the push (`previous`, or the one at the commit `before`; null when that commit or file
 * cannot be read), and whether this push releases it.
 */
export function pythonRelease({ cwd, before, previous }) {
  return versionChange({ cwd, dir: PYTHON_DIR, before, previous });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { version, previous, changed } = pythonRelease({ cwd: process.cwd(), before: process.argv[2] });
  console.error(`@tenant-integration/python: ${previous ?? "(unknown)"} before the push, ${version} now`);
  console.log(`changed=${changed}`);
  console.log(`version=${version}`);
}
