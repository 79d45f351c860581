// The "Changelog" page's sources: the packages' CHANGELOG.md files and pending changesets, and the Go
// module's hand-kept notes (packages/go/CHANGELOG.md: the module is released by git tags, which
// changesets do not make), whose "Unreleased" section and tagged versions get a place of their own.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { changelogPage, goChangelog, releasedChangelogs } from "../scripts/changelog.mjs";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const root = mkdtempSync(join(tmpdir(), "changelog-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the Go module's place on the Changelog page", () => {
  it("reads the repository's Go notes: an Unreleased section, for the first release", () => {
    const go = goChangelog(repoRoot);
    expect(go.unreleased).toMatch(/First release of the Go SDK/);
    expect(go.unreleased).toMatch(/`tokenmanager`/);
  });

  it("shows unreleased Go notes under a heading of their own, and tagged versions under Released", () => {
    mkdirSync(join(root, "packages", "go"), { recursive: true });
    mkdirSync(join(root, "spec"), { recursive: true });
    writeFileSync(join(root, "packages", "go", "package.json"), JSON.stringify({ name: "@tenant-integration/go" }));
    writeFileSync(
      join(root, "packages", "go", "CHANGELOG.md"),
      "# Changelog\n\nIntro.\n\n## Unreleased\n\n- `loopback`: a new option.\n\n## v0.2.0\n\n- `redisstorage`: clusters.\n\n## v0.1.0\n\n- First release.\n",
    );
    const go = goChangelog(root);
    expect(go).toEqual({
      unreleased: "- `loopback`: a new option.",
      released: [
        { version: "v0.2.0", notes: "- `redisstorage`: clusters." },
        { version: "v0.1.0", notes: "- First release." },
      ],
    });
    // The hand-kept file is not taken for a changeset-written one of the npm package @tenant-integration/go.
    expect(releasedChangelogs(root)).toEqual([]);
    const page: string = changelogPage({ released: [], pending: [], go });
    expect(page).toMatch(
      /## Released\n\n### github\.com\/tenant-integration\/sdk\/packages\/go \(Go\)\n\n#### v0\.2\.0/,
    );
    expect(page).toMatch(/## Unreleased: the Go module\n\n.*packages\/go\/vX\.Y\.Z.*\n\n- `loopback`: a new option\./);
    expect(page).not.toMatch(/Nothing is released yet/);
  });

  it("says nothing is released while neither a package nor the Go module is", () => {
    const page: string = changelogPage({ released: [], pending: [], go: { unreleased: "- x", released: [] } });
    expect(page).toMatch(/^\*\*Nothing is released yet\.\*\*.*the Go module has no tag/);
  });
});
