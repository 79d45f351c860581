// Regression guard for CHANGELOG.md in the tarballs: changesets writes one per package on
// `changeset version`, and it ships only if the package's `files` lists it. The rehearsal runs that
// step in a temporary copy of the repository (tools/release/rehearse-version.mjs), as
// `pnpm release --dry-run` does.
//
// The Python package (packages/python) is private to npm but released to PyPI: changesets must
// version it (`privatePackages.version` in .changeset/config.json), its pyproject.toml reads the
// version from its package.json, and the apps and tools (private, never released) must not move.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { publishedPackages, root } from "../published.mjs";
import { rehearsePythonVersion, rehearseVersion } from "../../release/rehearse-version.mjs";

describe("changeset version, rehearsed in a temporary copy", () => {
  const rehearsed = rehearseVersion();

  it("versions every published package", () => {
    expect(rehearsed.map(({ name }) => name).sort()).toEqual(
      publishedPackages()
        .map(({ manifest }) => manifest.name)
        .sort(),
    );
    for (const { version } of rehearsed) expect(version).not.toBe("0.0.0");
  });

  it.each(rehearsed.map((r) => [r.name, r] as const))(
    "writes the CHANGELOG.md of %s, and its tarball carries it with the LICENSE",
    (_name, { changelogWritten, packed }) => {
      expect(changelogWritten).toBe(true);
      expect(packed).toEqual(expect.arrayContaining(["CHANGELOG.md", "LICENSE", "README.md", "package.json"]));
    },
  );
});

describe("the Python package's release, rehearsed in a temporary copy", () => {
  const python = rehearsePythonVersion();
  const current = JSON.parse(readFileSync(join(root, "packages", "python", "package.json"), "utf8")).version as string;

  /** `1.2.3` -> the version a minor changeset gives it (what changesets does for a 0.x or later version). */
  const nextMinor = (version: string): string => {
    const [major, minor] = version.split(".").map(Number);
    return `${major}.${(minor ?? 0) + 1}.0`;
  };

  it("bumps packages/python/package.json from a changeset naming @tenant-integration/python, and nothing else", () => {
    expect(python.versionBefore).toBe(current);
    expect(python.version).toBe(nextMinor(current));
    expect(python.othersMoved).toEqual([]);
  });

  it("builds the sdist and the wheel with that version, read from package.json by pyproject.toml", () => {
    expect(python.built).toEqual([
      `tenant_integration-${python.version}-py3-none-any.whl`,
      `tenant_integration-${python.version}.tar.gz`,
    ]);
  });

  it("writes packages/python/CHANGELOG.md, and the sdist carries it with the README and the LICENSE", () => {
    expect(python.changelogWritten).toBe(true);
    expect(python.sdistFiles).toEqual(
      expect.arrayContaining(["CHANGELOG.md", "README.md", "LICENSE", "PKG-INFO", "src/tenant_integration/py.typed"]),
    );
  });

  it("moves no app or tool when every npm package is released (they are in the changesets ignore list)", () => {
    expect(python.privateMovedByNpmRelease).toEqual([]);
  });

  it("lists every private workspace package but the Python one in the changesets ignore list, so none is ever versioned", () => {
    const config = JSON.parse(readFileSync(join(root, ".changeset", "config.json"), "utf8")) as {
      ignore: string[];
      privatePackages: { version: boolean };
    };
    const listed = JSON.parse(
      execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" }),
    ) as { name: string; path: string; private?: boolean }[];
    const privateNames = listed
      .filter(({ path, private: isPrivate }) => isPrivate && path !== root.replace(/\/$/, ""))
      .map(({ name }) => name);
    expect(config.privatePackages.version).toBe(true);
    expect([...config.ignore].sort()).toEqual(
      privateNames.filter((name) => name !== "@tenant-integration/python").sort(),
    );
  });
});
