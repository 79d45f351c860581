// The "Changelog" page's sources: the CHANGELOG.md files `changeset version` writes and the pending
// changesets. Every package of the kit is versioned by changesets, the ones npm never publishes too
// (the Python SDK, the Go module: tools/release/non-npm.mjs), so the Go module's notes reach the
// page as every package's do, with no file kept by hand.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { changelogPage, pendingChangesets, releasedChangelogs } from "../scripts/changelog.mjs";

interface Released {
  name: string;
  dir: string;
  changelog: string;
}
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const root = mkdtempSync(join(tmpdir(), "changelog-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes `text` at `path` under the scratch root. */
function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe("the Changelog page", () => {
  it("shows the Go module's released notes and its pending changeset as any package's", () => {
    mkdirSync(join(root, "spec"), { recursive: true });
    write("packages/go/package.json", JSON.stringify({ name: "@tenant-integration/go", version: "0.1.0" }));
    // As `changeset version` writes it, from a minor changeset naming @tenant-integration/go.
    write(
      "packages/go/CHANGELOG.md",
      "# @tenant-integration/go\n\n## 0.1.0\n\n### Minor Changes\n\n- First release.\n",
    );
    write(".changeset/go-loopback.md", '---\n"@tenant-integration/go": patch\n---\n\n`loopback`: a new option.\n');
    const released: Released[] = releasedChangelogs(root);
    expect(released).toEqual([
      { name: "@tenant-integration/go", dir: "packages/go", changelog: expect.stringContaining("First release.") },
    ]);
    const page: string = changelogPage({ released, pending: pendingChangesets(root) });
    expect(page).toMatch(
      /## Released\n\n### @tenant-integration\/go\n\n#### 0\.1\.0\n\n##### Minor Changes\n\n- First release\./,
    );
    expect(page).toMatch(
      /## Unreleased \(1 pending changesets\)\n\n- \*\*`@tenant-integration\/go` patch\*\* \(`go-loopback\.md`\)\n\n {2}`loopback`: a new option\./,
    );
    expect(page).not.toMatch(/Nothing is released yet/);
  });

  it("says nothing is released while no package has a CHANGELOG.md", () => {
    const page: string = changelogPage({ released: [], pending: [] });
    expect(page).toMatch(/^\*\*Nothing is released yet\.\*\* .*each is at `0\.0\.0`, with no `CHANGELOG\.md`/);
    expect(page).toMatch(/## Unreleased \(0 pending changesets\)\n\nNo pending changes\.$/);
  });

  it("reads only CHANGELOG.md files changesets wrote: each names its package and starts at its version", () => {
    // A notes file kept by hand (an "Unreleased" section renamed at release) would be a second home
    // for a package's notes beside its changesets: each file must be the one `changeset version` keeps.
    for (const { name, dir, changelog } of releasedChangelogs(repoRoot) as Released[]) {
      const { version } = JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as { version: string };
      expect(changelog, `${dir}/CHANGELOG.md`).toMatch(
        new RegExp(`^# ${name}\\n\\n## ${version.replaceAll(".", "\\.")}\\n`),
      );
    }
  });
});
