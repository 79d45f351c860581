#!/usr/bin/env node
// Which tag releases the Go module. The module (packages/go, github.com/tenant-integration/sdk/packages/go)
// is versioned by changesets, like the Python SDK: a changeset naming `@tenant-integration/go` bumps
// the version of packages/go/package.json (private: npm never sees it) and writes
// packages/go/CHANGELOG.md. Go takes a module's versions from git tags named after its folder,
// `packages/go/vX.Y.Z` (https://go.dev/ref/mod#vcs-version), so when a push moved that version (a
// merged "Version packages" pull request that versioned the module; version-change.mjs), the release
// workflow pushes the tag of the new version.
//
//   node tools/release/go-release.mjs <commit before the push>
//
// prints `changed=true|false`, `tag=packages/go/vX.Y.Z` and `version=X.Y.Z`, the lines the release
// workflow appends to $GITHUB_OUTPUT before it pushes the tag. A tag that exists already is never
// pushed again (a rerun, a commit before the push that cannot be read). It fails on a version older
// than the module's latest tag, and from v2 on on a module path without the major version at its end
// (`…/packages/go/v2` in go.mod): Go would refuse that tag.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { versionChange } from "./version-change.mjs";

/** The folder of the Go module and the prefix of its tags. */
export const GO_DIR = "packages/go";
export const TAG_PREFIX = `${GO_DIR}/v`;

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

/** Compares two semantic versions (pre-releases before their release, compared as text). */
export function compareVersions(a, b) {
  const [x, y] = [SEMVER.exec(a), SEMVER.exec(b)];
  if (!x || !y) throw new Error(`not a semantic version: ${!x ? a : b}`);
  for (let i = 1; i <= 3; i++) if (Number(x[i]) !== Number(y[i])) return Number(x[i]) - Number(y[i]);
  if (x[4] === y[4]) return 0;
  if (x[4] === undefined) return 1;
  if (y[4] === undefined) return -1;
  return x[4] < y[4] ? -1 : 1;
}

/** The module path in packages/go/go.mod. */
export function modulePath(cwd) {
  return /^module\s+(\S+)/m.exec(readFileSync(join(cwd, GO_DIR, "go.mod"), "utf8"))[1];
}

/** The module's tags (`packages/go/vX.Y.Z`) in the git repository at `repo`, oldest first. */
export function moduleTags(repo) {
  let listed = "";
  try {
    listed = execFileSync("git", ["tag", "--list", `${TAG_PREFIX}*`], {
      cwd: repo,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    // Not a git repository: no tags.
  }
  return listed
    .split("\n")
    .map((name) => name.trim())
    .filter((name) => SEMVER.test(name.slice(TAG_PREFIX.length)))
    .sort((a, b) => compareVersions(a.slice(TAG_PREFIX.length), b.slice(TAG_PREFIX.length)));
}

/**
 * What a push releases of the Go module in the tree at `cwd`: `{ version, previous, tag, previousTag,
 * changed, why, module }`. `version` is packages/go/package.json's (changesets wrote it), `previous`
 * the one before the push (given, or read at the commit `before`), `tag` the tag of `version`,
 * `previousTag` the module's latest tag in the repository at `repo` (default `cwd`), and `changed`
 * whether the workflow pushes `tag`, for the reason `why`. Throws when Go would refuse the tag: a
 * version older than `previousTag`, or v2 and later without the major version suffix on the module path.
 */
export function goRelease({ cwd, before, previous, repo = cwd }) {
  const change = versionChange({ cwd, dir: GO_DIR, before, previous });
  const { version } = change;
  const tag = `${TAG_PREFIX}${version}`;
  const module = modulePath(cwd);
  const major = Number(SEMVER.exec(version)?.[1] ?? Number.NaN);
  if (Number.isNaN(major)) throw new Error(`${GO_DIR}/package.json: not a semantic version: ${version}`);
  if (major >= 2 && !module.endsWith(`/v${major}`)) {
    throw new Error(
      `${tag} needs the module path to end in /v${major} (go.mod says ${module}): https://go.dev/ref/mod#major-version-suffixes`,
    );
  }
  const tags = moduleTags(repo);
  const previousTag = tags.at(-1) ?? null;
  const release = { ...change, tag, previousTag, module };
  // 0.0.0 is the version of a package changesets has never versioned: nothing is released yet.
  if (version === "0.0.0") return { ...release, changed: false, why: "nothing is released yet (0.0.0)" };
  if (!change.changed) return { ...release, changed: false, why: `the module's version did not change (${version})` };
  if (tags.includes(tag)) return { ...release, changed: false, why: `${tag} exists already` };
  if (previousTag && compareVersions(version, previousTag.slice(TAG_PREFIX.length)) < 0)
    throw new Error(`${tag} would be older than the module's latest tag, ${previousTag}`);
  const from = change.previous === null ? "the version before the push is unknown" : `from ${change.previous}`;
  return {
    ...release,
    changed: true,
    why: `${from}; ${previousTag ? `after ${previousTag}` : "the module's first tag"}`,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { version, tag, changed, why, module } = goRelease({ cwd: process.cwd(), before: process.argv[2] });
  console.error(
    `${module}: ${changed ? "releases" : "does not release"} ${tag} (${why}); users: go get ${module}@v${version}`,
  );
  console.log(`changed=${changed}`);
  console.log(`tag=${tag}`);
  console.log(`version=${version}`);
}
