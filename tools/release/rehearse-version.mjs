// A rehearsal of the "Version packages" step, in a temporary copy of the repository so nothing here
// changes: changesets are written, `changeset version` runs, and what it wrote is read.
//
// - `rehearseVersion`: the pending changesets plus a patch for every package changesets releases
//   (the npm ones and the ones released elsewhere, tools/release/non-npm.mjs). Every npm package
//   gets a CHANGELOG.md its tarball carries (`pnpm pack --dry-run`); every other package its
//   CHANGELOG.md, its new version and what the release workflow does with it (the Go module's tag).
// - `rehearseAlone`: a minor changeset naming one package released elsewhere, alone: it moves that
//   package and nothing else, and its artifacts (the Python wheel) carry the new version.
// - `privateMovedByNpmRelease`: a patch for every npm package moves no private package.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { publishedPackages, root } from "../packaging/published.mjs";
import { nonNpmPackages } from "./non-npm.mjs";

const marker = "Release rehearsal: this entry exists only in a temporary copy.";

/** A changeset giving each of `names` the `bump`, with the rehearsal's note. */
const changesetFor = (names, bump) =>
  `---\n${names.map((name) => `"${name}": ${bump}`).join("\n")}\n---\n\n${marker}\n`;

/**
 * Runs `work(copy)` in a temporary copy of the repository (the files git would commit, with the
 * installed node_modules borrowed), after writing `changeset` as `.changeset/release-rehearsal.md`
 * and running `changeset version` there; removes the copy afterwards.
 */
function inVersionedCopy(changeset, work, { onlyThisChangeset = false } = {}) {
  const copy = mkdtempSync(join(tmpdir(), "release-rehearsal-"));
  try {
    // The files git would commit (tracked, and new ones not ignored): no dist/, no node_modules/.
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
    })
      .split("\0")
      .filter((file) => file && existsSync(join(root, file)));
    for (const file of files) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      cpSync(join(root, file), join(copy, file));
    }
    // changesets loads its changelog generator (@changesets/cli/changelog) from the root's
    // node_modules, and `pnpm pack` reads each package's installed workspace dependencies (to replace
    // `workspace:^`): borrow the installed ones. They only affect version ranges in the packed
    // package.json, not which files are packed, which is what the rehearsal reads.
    symlinkSync(join(root, "node_modules"), join(copy, "node_modules"), "dir");
    for (const { dir } of publishedPackages()) {
      if (existsSync(join(root, dir, "node_modules")))
        symlinkSync(join(root, dir, "node_modules"), join(copy, dir, "node_modules"), "dir");
    }
    if (onlyThisChangeset) {
      for (const file of readdirSync(join(copy, ".changeset")))
        if (file.endsWith(".md") && file !== "README.md") rmSync(join(copy, ".changeset", file));
    }
    writeFileSync(join(copy, ".changeset", "release-rehearsal.md"), changeset);
    execFileSync(join(root, "node_modules", ".bin", "changeset"), ["version"], { cwd: copy, stdio: "pipe" });
    return work(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** The version in `<dir>/package.json` under `base`. */
const versionIn = (base, dir) => JSON.parse(readFileSync(join(base, dir, "package.json"), "utf8")).version;

/** `<dir>/CHANGELOG.md` under `base`, or "" when there is none. */
function changelogIn(base, dir) {
  const file = join(base, dir, "CHANGELOG.md");
  return existsSync(file) ? readFileSync(file, "utf8") : "";
}

/** `entry.plan` on a versioned copy, with the error it throws (a release the registry would refuse). */
function planIn(copy, entry, previous) {
  try {
    return { plan: entry.plan({ cwd: copy, previous, repo: root }), planError: null };
  } catch (error) {
    return { plan: null, planError: error.message };
  }
}

/**
 * Runs the rehearsal of the next release: the pending changesets and a patch for every package
 * changesets releases. Returns `published`, for each npm package the version `changeset version`
 * gave it, whether its CHANGELOG.md holds the rehearsal entry and the files `pnpm pack` would ship;
 * and `nonNpm`, for each package released elsewhere its version before and after, its CHANGELOG.md
 * and what the release workflow would do (`plan`, or `planError` when the release would be refused).
 */
export function rehearseVersion() {
  const packages = publishedPackages();
  const names = [...packages.map(({ manifest }) => manifest.name), ...nonNpmPackages.map(({ name }) => name)];
  return inVersionedCopy(changesetFor(names, "patch"), (copy) => ({
    published: packages.map(({ dir, manifest }) => {
      const out = execFileSync("pnpm", ["pack", "--dry-run", "--json"], { cwd: join(copy, dir), encoding: "utf8" });
      const packed = JSON.parse(out.slice(out.indexOf("{")));
      return {
        name: manifest.name,
        dir,
        version: versionIn(copy, dir),
        changelogWritten: changelogIn(copy, dir).includes(marker),
        packed: packed.files.map((file) => file.path),
      };
    }),
    nonNpm: nonNpmPackages.map((entry) => {
      const versionBefore = versionIn(root, entry.dir);
      const changelog = changelogIn(copy, entry.dir);
      return {
        name: entry.name,
        dir: entry.dir,
        registry: entry.registry,
        versionBefore,
        version: versionIn(copy, entry.dir),
        changelog,
        changelogWritten: changelog.includes(marker),
        ...planIn(copy, entry, versionBefore),
      };
    }),
  }));
}

/** Every workspace package's version, by name (public and private), in the tree at `base`. */
function workspaceVersions(base) {
  const listed = JSON.parse(
    execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" }),
  );
  const versions = {};
  for (const { path } of listed) {
    const manifest = JSON.parse(readFileSync(join(base, relative(root, path), "package.json"), "utf8"));
    if (manifest.version !== undefined) versions[manifest.name] = manifest.version;
  }
  return versions;
}

/**
 * The release of one package released elsewhere (`entry`, from non-npm.mjs), rehearsed in a
 * temporary copy: a minor changeset naming it alone (the pending ones removed), `changeset version`,
 * then what the workflow would do (`plan`) and, when the package has a build, its artifacts built
 * there (`built`, and `contents`, the files of the archive that carries its notes). Proves that a
 * changeset bumps its package.json (changesets versions private packages: `privatePackages.version`
 * is true), writes its CHANGELOG.md, and moves no other package (`othersMoved`).
 */
export function rehearseAlone(entry) {
  const before = workspaceVersions(root);
  return inVersionedCopy(
    changesetFor([entry.name], "minor"),
    (copy) => {
      const after = workspaceVersions(copy);
      const build = entry.build?.(join(copy, entry.dir), join(copy, "rehearsal-dist")) ?? null;
      return {
        name: entry.name,
        versionBefore: before[entry.name],
        version: after[entry.name],
        othersMoved: Object.keys(after).filter((other) => other !== entry.name && after[other] !== before[other]),
        changelogWritten: changelogIn(copy, entry.dir).includes(marker),
        ...planIn(copy, entry, before[entry.name]),
        built: build?.built ?? null,
        contents: build?.contents ?? null,
      };
    },
    { onlyThisChangeset: true },
  );
}

/**
 * The private workspace packages a patch for every npm package moves (the pending changesets
 * removed): none, as the apps and tools are in the changesets `ignore` list and the packages
 * released elsewhere move only by a changeset naming them.
 */
export function privateMovedByNpmRelease() {
  const before = workspaceVersions(root);
  const privateNames = JSON.parse(
    execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" }),
  )
    .filter(({ path, private: isPrivate }) => isPrivate && path !== root.replace(/\/$/, ""))
    .map(({ name }) => name);
  const names = publishedPackages().map(({ manifest }) => manifest.name);
  return inVersionedCopy(
    changesetFor(names, "patch"),
    (copy) => {
      const after = workspaceVersions(copy);
      return privateNames.filter((name) => after[name] !== before[name]);
    },
    { onlyThisChangeset: true },
  );
}
