// A rehearsal of the "Version packages" step, in a temporary copy of the repository so nothing here
// changes: a patch changeset for every published package is added, `changeset version` runs, and
// each package's `pnpm pack --dry-run` list is read. It proves that changesets writes a CHANGELOG.md
// per package and that the tarball then carries it (and the LICENSE). `rehearsePythonVersion` does
// the same for the Python package, which changesets versions but npm never publishes (PyPI does).
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

const marker = "Release rehearsal: this entry exists only in a temporary copy.";

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

/**
 * Runs the rehearsal; resolves with, for each published package, the version `changeset version`
 * gave it, whether its CHANGELOG.md holds the rehearsal entry, and the files `pnpm pack` would ship.
 */
export function rehearseVersion() {
  const packages = publishedPackages();
  const changeset = `---\n${packages.map(({ manifest }) => `"${manifest.name}": patch`).join("\n")}\n---\n\n${marker}\n`;
  return inVersionedCopy(changeset, (copy) =>
    packages.map(({ dir, manifest }) => {
      const folder = join(copy, dir);
      const changelog = join(folder, "CHANGELOG.md");
      const out = execFileSync("pnpm", ["pack", "--dry-run", "--json"], { cwd: folder, encoding: "utf8" });
      const packed = JSON.parse(out.slice(out.indexOf("{")));
      return {
        name: manifest.name,
        dir,
        version: JSON.parse(readFileSync(join(folder, "package.json"), "utf8")).version,
        changelogWritten: existsSync(changelog) && readFileSync(changelog, "utf8").includes(marker),
        packed: packed.files.map((file) => file.path),
      };
    }),
  );
}

/** Every workspace package's version, by name (public and private). */
function workspaceVersions(dir) {
  const listed = JSON.parse(
    execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" }),
  );
  const versions = {};
  for (const { path } of listed) {
    const manifest = JSON.parse(readFileSync(join(dir, relative(root, path), "package.json"), "utf8"));
    if (manifest.version !== undefined) versions[manifest.name] = manifest.version;
  }
  return versions;
}

/**
 * The Python package's release, rehearsed in two temporary copies.
 *
 * 1. A minor changeset naming `@tenant-integration/python` alone (the pending ones removed), then
 *    `changeset version`, then the sdist and the wheel built there with the repository's venv
 *    (`python -m build --no-isolation`, as `pnpm build` does). Proves that a changeset bumps
 *    packages/python/package.json (changesets versions private packages: `privatePackages.version`
 *    is true), that pyproject reads that version into both files, that the CHANGELOG.md is written
 *    and shipped in the sdist, and that no other package moves (`othersMoved`).
 * 2. A patch for every published npm package (the pending changesets removed): the Python package
 *    does not move, and neither does any other private package (`privateMovedByNpmRelease`: the apps and tools are in the changesets
 *    `ignore` list, so they get no version or CHANGELOG.md of their own).
 */
export function rehearsePythonVersion() {
  const name = "@tenant-integration/python";
  const before = workspaceVersions(root);
  const privateNames = JSON.parse(
    execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" }),
  )
    .filter(({ path, private: isPrivate }) => isPrivate && path !== root.replace(/\/$/, ""))
    .map(({ name: packageName }) => packageName);
  const npmRelease = `---\n${publishedPackages()
    .map(({ manifest }) => `"${manifest.name}": patch`)
    .join("\n")}\n---\n\n${marker}\n`;
  const privateMovedByNpmRelease = inVersionedCopy(
    npmRelease,
    (copy) => {
      const after = workspaceVersions(copy);
      return privateNames.filter((privateName) => after[privateName] !== before[privateName]);
    },
    { onlyThisChangeset: true },
  );
  const changeset = `---\n"${name}": minor\n---\n\n${marker}\n`;
  const python = inVersionedCopy(
    changeset,
    (copy) => {
      const folder = join(copy, "packages", "python");
      const changelog = join(folder, "CHANGELOG.md");
      const after = workspaceVersions(copy);
      const out = join(copy, "python-dist");
      // The repository's venv (made or updated first, as every Python task does), which holds `build`.
      const python = execFileSync("node", [join(root, "tools", "python", "venv.mjs"), "--print"], {
        cwd: root,
        encoding: "utf8",
      }).trim();
      execFileSync(python, ["-m", "build", "--no-isolation", "--outdir", out], { cwd: folder, stdio: "pipe" });
      const built = readdirSync(out).sort();
      const sdist = built.find((file) => file.endsWith(".tar.gz"));
      const sdistFiles = sdist
        ? execFileSync("tar", ["tzf", join(out, sdist)], { encoding: "utf8" })
            .split("\n")
            .filter(Boolean)
        : [];
      return {
        name,
        versionBefore: before[name],
        version: after[name],
        othersMoved: Object.keys(after).filter((other) => other !== name && after[other] !== before[other]),
        changelogWritten: existsSync(changelog) && readFileSync(changelog, "utf8").includes(marker),
        built,
        sdistFiles: sdistFiles.map((file) => file.slice(file.indexOf("/") + 1)),
      };
    },
    { onlyThisChangeset: true },
  );
  return { ...python, privateMovedByNpmRelease };
}
