// What "ready to publish" means for a workspace package, in one place: the release dry run
// (tools/release) refuses a package that fails it, and the packaging tests assert it for every
// package, so a package added later is held to it without anyone editing a list.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file lives in tools/packaging/). */
export const root = fileURLToPath(new URL("../..", import.meta.url));

/** Where the sources live; `repository.url` must name it or `npm publish --provenance` answers E422. */
export const repositoryUrl = "git+https://github.com/tenant-integration/sdk.git";
export const issuesUrl = "https://github.com/tenant-integration/sdk/issues";
/** The GitHub page of a folder of the repository (what `homepage` and README links point at). */
export const treeUrl = (dir) => `https://github.com/tenant-integration/sdk/tree/main/${dir}`;

/**
 * Every workspace package that is not private, as pnpm sees the workspace (pnpm-workspace.yaml),
 * with its folder relative to the root (forward slashes) and its manifest.
 */
export function publishedPackages() {
  const listed = JSON.parse(
    execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" }),
  );
  return listed
    .map(({ path }) => ({
      dir: relative(root, path).split("\\").join("/"),
      manifest: JSON.parse(readFileSync(join(path, "package.json"), "utf8")),
    }))
    .filter(({ dir, manifest }) => dir !== "" && !manifest.private)
    .sort((a, b) => a.dir.localeCompare(b.dir));
}

/**
 * What keeps the package in `dir` (relative to the root) from being published as it should: an
 * empty list when nothing does. Checks the npm metadata provenance and users need (repository with
 * its directory, homepage, bugs, MIT license), a LICENSE file equal to the root one, a `files`
 * allow-list that ships LICENSE and the changesets CHANGELOG.md, and public access with provenance.
 */
export function publishProblems(dir, manifest) {
  const problems = [];
  const expect = (ok, message) => ok || problems.push(message);
  expect(manifest.repository?.type === "git", `repository.type must be "git"`);
  expect(
    manifest.repository?.url === repositoryUrl,
    `repository.url must be "${repositoryUrl}" (npm provenance answers E422 otherwise)`,
  );
  expect(manifest.repository?.directory === dir, `repository.directory must be "${dir}"`);
  expect(manifest.homepage === `${treeUrl(dir)}#readme`, `homepage must be "${treeUrl(dir)}#readme"`);
  const bugs = typeof manifest.bugs === "string" ? manifest.bugs : manifest.bugs?.url;
  expect(bugs === issuesUrl, `bugs must be "${issuesUrl}"`);
  expect(manifest.license === "MIT", `license must be "MIT" (the root LICENSE)`);
  const license = join(root, dir, "LICENSE");
  expect(
    existsSync(license) && readFileSync(license, "utf8") === readFileSync(join(root, "LICENSE"), "utf8"),
    `${dir}/LICENSE must be a copy of the root LICENSE`,
  );
  expect(Array.isArray(manifest.files), `files must be an allow-list`);
  for (const file of ["README.md", "LICENSE", "CHANGELOG.md"])
    expect(manifest.files?.includes(file) ?? false, `files must list ${file}`);
  expect(manifest.publishConfig?.access === "public", `publishConfig.access must be "public"`);
  expect(manifest.publishConfig?.provenance === true, `publishConfig.provenance must be true`);
  return problems;
}
