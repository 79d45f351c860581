// Regression guard for CHANGELOG.md in the tarballs: changesets writes one per package on
// `changeset version`, and it ships only if the package's `files` lists it. The rehearsal runs that
// step in a temporary copy of the repository (tools/release/rehearse-version.mjs), as
// `pnpm release --dry-run` does.
import { describe, expect, it } from "vitest";
import { publishedPackages } from "../published.mjs";
import { rehearseVersion } from "../../release/rehearse-version.mjs";

describe("changeset version, rehearsed in a temporary copy", () => {
  const rehearsed = rehearseVersion();

  it("versions every published package", () => {
    expect(rehearsed.map(({ name }) => name).sort()).toEqual(publishedPackages().map(({ manifest }) => manifest.name).sort());
    for (const { version } of rehearsed) expect(version).not.toBe("0.0.0");
  });

  it.each(rehearsed.map((r) => [r.name, r] as const))("writes the CHANGELOG.md of %s, and its tarball carries it with the LICENSE", (_name, { changelogWritten, packed }) => {
    expect(changelogWritten).toBe(true);
    expect(packed).toEqual(expect.arrayContaining(["CHANGELOG.md", "LICENSE", "README.md", "package.json"]));
  });
});
