// The packages changesets versions that npm never publishes. Each is a private workspace package
// (npm refuses to publish it) that `.changeset/config.json` does not ignore, so a changeset naming it
// bumps its package.json and writes its CHANGELOG.md, like any npm package's; a release script of
// this folder then releases that version to the package's own registry, from the release workflow.
// A new one joins by an entry here: tools/release/README.md says what else it needs.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { root } from "../packaging/published.mjs";
import { goRelease } from "./go-release.mjs";
import { javaRelease } from "./java-release.mjs";
import { pythonRelease } from "./python-release.mjs";

/**
 * @typedef {object} Plan What the release workflow does for a package on a push.
 * @property {boolean} changed Whether it releases the package.
 * @property {string} release What it does then (with the version and the names users meet).
 * @property {string} why Why it does (or does not).
 */

/**
 * @typedef {object} NonNpmPackage
 * @property {string} name The workspace package's name (what changesets name).
 * @property {string} dir Its folder, relative to the root.
 * @property {string} registry Where users get it.
 * @property {string} script The release script the workflow runs with the commit before the push.
 * @property {(options: { cwd: string, previous: string | null, repo: string }) => Plan} plan What the
 *   workflow does for the tree at `cwd`, given the version before the push (`repo`: the git checkout
 *   whose tags and history count). Throws when the release would be refused.
 * @property {(folder: string, out: string) => { built: string[], contents: string[] }} [build] Builds the
 *   package in `folder` (a versioned copy) into `out` as the workflow does: the file names written,
 *   and the files of the archive that carries the package's notes. Absent when the registry builds
 *   from the sources itself (the Go module proxy from the tag).
 */

/** The Python SDK's sdist and wheel, built as `pnpm build` builds them (python -m build from the venv). */
function buildPython(folder, out) {
  // The repository's venv (made or updated first, as every Python task does), which holds `build`.
  const python = execFileSync("node", [join(root, "tools", "python", "venv.mjs"), "--print"], {
    cwd: root,
    encoding: "utf8",
  }).trim();
  execFileSync(python, ["-m", "build", "--no-isolation", "--outdir", out], { cwd: folder, stdio: "pipe" });
  const built = readdirSync(out).sort();
  const sdist = built.find((file) => file.endsWith(".tar.gz"));
  const contents = sdist
    ? execFileSync("tar", ["tzf", join(out, sdist)], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean)
        .map((file) => file.slice(file.indexOf("/") + 1))
    : [];
  return { built, contents };
}

/** @type {NonNpmPackage[]} */
export const nonNpmPackages = [
  {
    name: "@tenant-integration/go",
    dir: "packages/go",
    registry: "the Go module proxy (a git tag)",
    script: "tools/release/go-release.mjs",
    plan: ({ cwd, previous, repo }) => {
      const { changed, tag, module, version, why } = goRelease({ cwd, previous, repo });
      return { changed, release: `push the tag ${tag} (go get ${module}@v${version})`, why };
    },
  },
  {
    name: "@tenant-integration/python",
    dir: "packages/python",
    registry: "PyPI (tenant-integration)",
    script: "tools/release/python-release.mjs",
    plan: ({ cwd, previous }) => {
      const release = pythonRelease({ cwd, previous });
      return {
        changed: release.changed,
        release: `upload tenant-integration ${release.version} (sdist and wheel) to PyPI`,
        why: release.changed ? `from ${release.previous ?? "an unknown version"}` : "its version did not change",
      };
    },
    build: buildPython,
  },
  {
    name: "@tenant-integration/java",
    dir: "packages/java",
    registry: "Maven Central (io.github.tenant-integration)",
    script: "tools/release/java-release.mjs",
    plan: ({ cwd, previous }) => {
      const { changed, version, group, artifacts, why } = javaRelease({ cwd, previous });
      const names = artifacts.map((artifact) => `${group}:${artifact}:${version}`).join(", ");
      return { changed, release: `deploy ${names} to Maven Central`, why };
    },
  },
];
