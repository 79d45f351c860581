#!/usr/bin/env node
// Which tag releases the Go module. The module (packages/go, github.com/tenant-integration/sdk/packages/go)
// is released with the monorepo's releases but not by changesets (it is in .changeset/config.json's
// "ignore": npm never sees it): Go takes a module's versions from git tags named after its folder,
// `packages/go/vX.Y.Z` (https://go.dev/ref/mod#vcs-version). When a release publishes versions (a
// merged "Version packages" pull request), the Go module gets the release's version, the highest
// version among the published npm packages and the Python SDK, as long as packages/go changed since
// its last tag and no tag of that version exists yet.
//
//   node tools/release/go-release.mjs
//
// prints `changed=true|false`, `tag=packages/go/vX.Y.Z` and `version=X.Y.Z`, the lines the release
// workflow appends to $GITHUB_OUTPUT before it pushes the tag. From v2 on, Go wants the major
// version at the end of the module path (`…/packages/go/v2` in go.mod): the script refuses a tag the
// module path does not allow.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { publishedPackages } from "../packaging/published.mjs";

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

/** The versions of a release: every published npm package's and the Python SDK's, in the tree at `cwd`. */
export function releaseVersions(cwd) {
  const manifests = [...publishedPackages().map(({ dir }) => dir), "packages/python"];
  return manifests.map((dir) => JSON.parse(readFileSync(join(cwd, dir, "package.json"), "utf8")).version);
}

function git(cwd, args) {
  try {
    return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

/** The module path in packages/go/go.mod. */
export function modulePath(cwd) {
  return /^module\s+(\S+)/m.exec(readFileSync(join(cwd, GO_DIR, "go.mod"), "utf8"))[1];
}

/**
 * `{ version, tag, previousTag, changed, why, module }` for the tree at `cwd`: the release's version
 * (the highest of `versions`, by default releaseVersions(cwd)), its tag, the module's latest tag,
 * whether this release pushes the tag, and why (or why not).
 */
export function goRelease({ cwd, versions = releaseVersions(cwd) }) {
  const version = [...versions].sort(compareVersions).at(-1);
  const tag = `${TAG_PREFIX}${version}`;
  const module = modulePath(cwd);
  const major = Number(SEMVER.exec(version)[1]);
  if (major >= 2 && !module.endsWith(`/v${major}`)) {
    throw new Error(
      `${tag} needs the module path to end in /v${major} (go.mod says ${module}): https://go.dev/ref/mod#major-version-suffixes`,
    );
  }
  // 0.0.0 is the version of a package changesets has never versioned: nothing is released yet.
  if (version === "0.0.0")
    return { version, tag, previousTag: null, changed: false, why: "nothing is released yet (0.0.0)", module };
  const tags = (git(cwd, ["tag", "--list", `${TAG_PREFIX}*`]) ?? "")
    .split("\n")
    .filter((name) => SEMVER.test(name.slice(TAG_PREFIX.length)))
    .sort((a, b) => compareVersions(a.slice(TAG_PREFIX.length), b.slice(TAG_PREFIX.length)));
  const previousTag = tags.at(-1) ?? null;
  if (tags.includes(tag)) return { version, tag, previousTag, changed: false, why: `${tag} exists already`, module };
  if (previousTag && compareVersions(version, previousTag.slice(TAG_PREFIX.length)) < 0) {
    return {
      version,
      tag,
      previousTag,
      changed: false,
      why: `${previousTag} is newer than the release's version`,
      module,
    };
  }
  if (previousTag && git(cwd, ["diff", "--quiet", previousTag, "HEAD", "--", GO_DIR]) !== null) {
    return { version, tag, previousTag, changed: false, why: `${GO_DIR} has not changed since ${previousTag}`, module };
  }
  return {
    version,
    tag,
    previousTag,
    changed: true,
    why: previousTag ? `${GO_DIR} changed since ${previousTag}` : "the module's first tag",
    module,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { version, tag, changed, why, module } = goRelease({ cwd: process.cwd() });
  console.error(
    `${module}: ${changed ? "releases" : "does not release"} ${tag} (${why}); users: go get ${module}@v${version}`,
  );
  console.log(`changed=${changed}`);
  console.log(`tag=${tag}`);
  console.log(`version=${version}`);
}
