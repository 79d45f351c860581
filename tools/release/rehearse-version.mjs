// A rehearsal of the "Version packages" step, in a temporary copy of the repository so nothing here
// changes: a patch changeset for every published package is added, `changeset version` runs, and
// each package's `pnpm pack --dry-run` list is read. It proves that changesets writes a CHANGELOG.md
// per package and that the tarball then carries it (and the LICENSE).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { publishedPackages, root } from "../packaging/published.mjs";

const marker = "Release rehearsal: this entry exists only in a temporary copy.";

/**
 * Runs the rehearsal; resolves with, for each published package, the version `changeset version`
 * gave it, whether its CHANGELOG.md holds the rehearsal entry, and the files `pnpm pack` would ship.
 */
export function rehearseVersion() {
  const copy = mkdtempSync(join(tmpdir(), "release-rehearsal-"));
  try {
    // The files git would commit (tracked, and new ones not ignored): no dist/, no node_modules/.
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" })
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
    const packages = publishedPackages();
    for (const { dir } of packages) {
      if (existsSync(join(root, dir, "node_modules"))) symlinkSync(join(root, dir, "node_modules"), join(copy, dir, "node_modules"), "dir");
    }
    writeFileSync(
      join(copy, ".changeset", "release-rehearsal.md"),
      `---\n${packages.map(({ manifest }) => `"${manifest.name}": patch`).join("\n")}\n---\n\n${marker}\n`,
    );
    execFileSync(join(root, "node_modules", ".bin", "changeset"), ["version"], { cwd: copy, stdio: "pipe" });
    return packages.map(({ dir, manifest }) => {
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
    });
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
