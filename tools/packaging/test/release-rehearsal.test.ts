// Regression guard for CHANGELOG.md in the tarballs: changesets writes one per package on
// `changeset version`, and it ships only if the package's `files` lists it. The rehearsal runs that
// step in a temporary copy of the repository (tools/release/rehearse-version.mjs), as
// `pnpm release --dry-run` does.
//
// The packages released elsewhere (tools/release/non-npm.mjs: the Go module, the Python SDK) are
// private to npm but versioned by changesets like the others (`privatePackages.version` in
// .changeset/config.json, which ignores every other private package): a changeset naming one bumps
// its package.json and writes its CHANGELOG.md, its release script turns that version into what its
// registry wants (the Go module's tag, the Python wheel), and the apps and tools never move.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nonNpmPackages } from "../../release/non-npm.mjs";
import { privateMovedByNpmRelease, rehearseAlone, rehearseVersion } from "../../release/rehearse-version.mjs";
import { publishedPackages, root } from "../published.mjs";

const rehearsed = rehearseVersion();
/** A minor changeset naming each package released elsewhere, alone, rehearsed once per package. */
const alone = Object.fromEntries(nonNpmPackages.map((entry) => [entry.name, rehearseAlone(entry)]));
const read = (path: string): string => readFileSync(join(root, path), "utf8");
const versionOf = (dir: string): string => (JSON.parse(read(`${dir}/package.json`)) as { version: string }).version;
const byName = <T extends { name: string }>(rows: T[], name: string): T => {
  const row = rows.find((candidate) => candidate.name === name);
  if (!row) throw new Error(`no rehearsal of ${name}`);
  return row;
};

/** The notes of the pending changesets (`.changeset/*.md`) that name `name`. */
function pendingNotesFor(name: string): string[] {
  return readdirSync(join(root, ".changeset"))
    .filter((file) => file.endsWith(".md") && file !== "README.md")
    .map((file) => /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(read(`.changeset/${file}`)))
    .filter((match) => match !== null && new RegExp(`^["']?${name}["']?\\s*:`, "m").test(match[1]!))
    .map((match) => match![2]!.trim());
}

/** `1.2.3` -> the version a minor changeset gives it (what changesets does for a 0.x or later version). */
const nextMinor = (version: string): string => {
  const [major, minor] = version.split(".").map(Number);
  return `${major}.${(minor ?? 0) + 1}.0`;
};

/** Compares two x.y.z versions. */
function compareSemver(a: string, b: string): number {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

describe("changeset version, rehearsed in a temporary copy", () => {
  it("versions every published package", () => {
    expect(rehearsed.published.map(({ name }) => name).sort()).toEqual(
      publishedPackages()
        .map(({ manifest }) => manifest.name)
        .sort(),
    );
    for (const { version } of rehearsed.published) expect(version).not.toBe("0.0.0");
  });

  it.each(rehearsed.published.map((r) => [r.name, r] as const))(
    "writes the CHANGELOG.md of %s, and its tarball carries it with the LICENSE",
    (_name, { changelogWritten, packed }) => {
      expect(changelogWritten).toBe(true);
      expect(packed).toEqual(expect.arrayContaining(["CHANGELOG.md", "LICENSE", "README.md", "package.json"]));
    },
  );

  it.each(rehearsed.nonNpm.map((r) => [r.name, r] as const))(
    "versions %s (released elsewhere) and writes its CHANGELOG.md from its pending changesets",
    (name, { dir, versionBefore, version, changelog, changelogWritten, plan, planError }) => {
      expect(versionBefore).toBe(versionOf(dir));
      expect(compareSemver(version, versionBefore)).toBeGreaterThan(0);
      expect(changelogWritten).toBe(true);
      expect(changelog).toMatch(new RegExp(`^# ${name}\\n\\n## ${version.replaceAll(".", "\\.")}\\n`));
      for (const notes of pendingNotesFor(name)) expect(changelog).toContain(notes.split("\n")[0]);
      // The release workflow would release that version (a refusal, such as a Go v2 without /v2 in
      // its module path, shows here before the "Version packages" pull request is merged).
      expect(planError).toBeNull();
      expect(plan?.changed).toBe(true);
    },
  );

  it("gives the Go module the tag of the version changesets wrote for it (packages/go/vX.Y.Z)", () => {
    const go = byName(rehearsed.nonNpm, "@tenant-integration/go");
    expect(go.plan?.release).toBe(
      `push the tag packages/go/v${go.version} (go get github.com/tenant-integration/sdk/packages/go@v${go.version})`,
    );
  });
});

describe("the packages released elsewhere (tools/release/non-npm.mjs)", () => {
  const listed = JSON.parse(
    execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" }),
  ) as { name: string; path: string; private?: boolean }[];
  const privateNames = listed
    .filter(({ path, private: isPrivate }) => isPrivate && path !== root.replace(/\/$/, ""))
    .map(({ name }) => name);

  it.each(nonNpmPackages.map((entry) => [entry.name, entry] as const))(
    "%s is a private workspace package whose release script the release workflow runs after a push",
    (name, { dir, script }) => {
      const manifest = JSON.parse(read(`${dir}/package.json`)) as { name: string; private?: boolean };
      expect(manifest).toMatchObject({ name, private: true });
      expect(privateNames).toContain(name);
      expect(read(".github/workflows/release.yml")).toContain(`node ${script} "\${{ github.event.before }}"`);
    },
  );

  it("are the private packages changesets versions: every other one is in the changesets ignore list", () => {
    const config = JSON.parse(read(".changeset/config.json")) as {
      ignore: string[];
      privatePackages: { version: boolean };
    };
    const elsewhere = nonNpmPackages.map(({ name }) => name);
    expect(config.privatePackages.version).toBe(true);
    expect([...config.ignore].sort()).toEqual(privateNames.filter((name) => !elsewhere.includes(name)).sort());
  });

  it("are never moved by a release of the npm packages, and neither is an app or a tool", () => {
    expect(privateMovedByNpmRelease()).toEqual([]);
  });

  describe.each(nonNpmPackages.map((entry) => [entry.name, entry] as const))(
    "a minor changeset naming %s alone",
    (name, entry) => {
      const rehearsal = alone[name]!;

      it("bumps its package.json and writes its CHANGELOG.md, and moves no other package", () => {
        expect(rehearsal.versionBefore).toBe(versionOf(entry.dir));
        expect(rehearsal.version).toBe(nextMinor(rehearsal.versionBefore));
        expect(rehearsal.changelogWritten).toBe(true);
        expect(rehearsal.othersMoved).toEqual([]);
      });

      it("is released by the workflow with that version", () => {
        expect(rehearsal.planError).toBeNull();
        expect(rehearsal.plan).toMatchObject({ changed: true, release: expect.stringContaining(rehearsal.version) });
      });

      if (entry.build) {
        it("builds artifacts carrying that version, and the sources carry the CHANGELOG.md", () => {
          expect(rehearsal.built?.length).toBeGreaterThan(0);
          for (const file of rehearsal.built ?? []) expect(file).toContain(`-${rehearsal.version}`);
          expect(rehearsal.contents).toContain("CHANGELOG.md");
        });
      }
    },
  );
});

describe("the Python package's release, rehearsed in a temporary copy", () => {
  const python = alone["@tenant-integration/python"]!;

  it("builds the sdist and the wheel with the version changesets wrote, read from package.json by pyproject.toml", () => {
    expect(python.built).toEqual([
      `tenant_integration-${python.version}-py3-none-any.whl`,
      `tenant_integration-${python.version}.tar.gz`,
    ]);
  });

  it("ships packages/python/CHANGELOG.md in the sdist with the README and the LICENSE", () => {
    expect(python.contents).toEqual(
      expect.arrayContaining(["CHANGELOG.md", "README.md", "LICENSE", "PKG-INFO", "src/tenant_integration/py.typed"]),
    );
  });
});
