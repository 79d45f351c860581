#!/usr/bin/env node
// `pnpm release [--dry-run]`: builds every package, then publishes the public ones with changesets
// (npm provenance on). With --dry-run it builds and packs and lists exactly what would be
// published — every package, version and file — checks each package is ready (see below), and
// publishes nothing.
//
// Why the metadata is checked here rather than left to npm: `npm publish --dry-run --provenance`
// (npm 11) neither attests nor contacts the registry, so it accepts a package without `repository`
// that the real publish rejects with E422 ("repository.url" is ""). Provenance needs the CI's OIDC
// token, which only the release workflow has; the dry run checks what the registry will compare.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publishedPackages, publishProblems, root } from "../packaging/published.mjs";
import { goRelease } from "./go-release.mjs";
import { rehearsePythonVersion, rehearseVersion } from "./rehearse-version.mjs";

const dryRun = process.argv.includes("--dry-run");

function run(title, command, args, options = {}) {
  console.log(`\n▶ ${title}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`✖ ${title} failed`);
    process.exit(result.status ?? 1);
  }
}

run("Build every package", "pnpm", ["turbo", "run", "build"]);

const failures = [];
for (const { dir, manifest } of publishedPackages()) {
  for (const problem of publishProblems(dir, manifest)) failures.push(`${manifest.name} (${dir}): ${problem}`);
}
if (failures.length > 0) {
  console.error(`\n✖ Not ready to publish:\n${failures.map((f) => `  ${f}`).join("\n")}`);
  process.exit(1);
}

if (dryRun) {
  console.log("\n▶ Pending version bumps (changesets)");
  spawnSync("pnpm", ["changeset", "status", "--verbose"], { cwd: root, stdio: "inherit" });

  console.log("\n▶ What would be published (pnpm pack, then npm publish --dry-run --provenance on the tarball)");
  const packs = mkdtempSync(join(tmpdir(), "release-dry-run-"));
  try {
    let total = 0;
    for (const { dir, manifest } of publishedPackages()) {
      const before = new Set(readdirSync(packs));
      const out = execFileSync("pnpm", ["pack", "--json", "--pack-destination", packs], {
        cwd: join(root, dir),
        encoding: "utf8",
      });
      const packed = JSON.parse(out.slice(out.indexOf("{")));
      const tarball = readdirSync(packs).find((file) => !before.has(file));
      console.log(
        `\n${packed.name}@${packed.version}  (${dir}, repository ${manifest.repository.url} ${manifest.repository.directory})`,
      );
      for (const file of packed.files) console.log(`  ${file.path}`);
      // What npm itself makes of the tarball (access, tag, files); it publishes nothing with --dry-run.
      const npm = spawnSync("npm", ["publish", join(packs, tarball), "--dry-run", "--provenance", "--loglevel=warn"], {
        cwd: packs,
        encoding: "utf8",
      });
      if (npm.status !== 0) failures.push(`${packed.name}: npm publish --dry-run failed:\n${npm.stdout}${npm.stderr}`);
      else console.log(`  npm: ${npm.stdout.trim().split("\n").at(-1)}`);
      total += 1;
    }
    console.log(`\n${total} packages would be published.`);
  } finally {
    rmSync(packs, { recursive: true, force: true });
  }

  console.log("\n▶ Rehearsal of `changeset version` in a temporary copy (CHANGELOG.md written and packed)");
  const rehearsed = rehearseVersion();
  for (const { name, version, changelogWritten, packed } of rehearsed) {
    const shipped = ["CHANGELOG.md", "LICENSE", "README.md"].filter((file) => packed.includes(file));
    console.log(
      `  ${name}@${version}: CHANGELOG.md ${changelogWritten ? "written" : "NOT written"}; tarball has ${shipped.join(", ") || "none of them"}`,
    );
    if (!changelogWritten || shipped.length !== 3)
      failures.push(`${name}: after changeset version, the tarball must carry CHANGELOG.md, LICENSE and README.md`);
  }

  console.log(
    "\n▶ Rehearsal of the Python package's release (changesets bumps packages/python/package.json; PyPI gets the build)",
  );
  const python = rehearsePythonVersion();
  console.log(
    `  ${python.name}: ${python.versionBefore} -> ${python.version} for a minor changeset; built ${python.built.join(", ")}`,
  );
  console.log(
    `  CHANGELOG.md ${python.changelogWritten ? "written" : "NOT written"}${python.sdistFiles.includes("CHANGELOG.md") ? ", in the sdist" : ", NOT in the sdist"}`,
  );
  if (python.othersMoved.length > 0)
    failures.push(`a changeset for ${python.name} alone also moved ${python.othersMoved.join(", ")}`);
  if (python.privateMovedByNpmRelease.length > 0)
    failures.push(
      `an npm release moves private packages: ${python.privateMovedByNpmRelease.join(", ")} (add them to "ignore" in .changeset/config.json)`,
    );
  if (
    !python.built.some((file) => file.endsWith(`-${python.version}-py3-none-any.whl`)) ||
    !python.changelogWritten ||
    !python.sdistFiles.includes("CHANGELOG.md")
  ) {
    failures.push(`${python.name}: the wheel must carry the version changesets wrote, and the sdist its CHANGELOG.md`);
  }

  // The Go module is released by a git tag named after its folder (tools/release/go-release.mjs), with
  // the release's version: here the versions the rehearsal above wrote.
  console.log("\n▶ The Go module's tag (Go reads versions from git tags; npm never sees the module)");
  try {
    const go = goRelease({ cwd: root, versions: [...rehearsed.map(({ version }) => version), python.version] });
    console.log(
      `  ${go.module}: would push tag ${go.tag} (${go.changed ? go.why : `not pushed: ${go.why}`}); users then run go get ${go.module}@v${go.version}`,
    );
  } catch (error) {
    failures.push(`the Go module's tag: ${error.message}`);
  }

  if (failures.length > 0) {
    console.error(`\n✖ Release dry run failed:\n${failures.map((f) => `  ${f}`).join("\n")}`);
    process.exit(1);
  }
  console.log("\nNothing was published (--dry-run).");
  process.exit(0);
}

if (!process.env.CI) {
  console.error(
    "Publishing runs in CI only (the release workflow), where npm provenance can be attested. Use --dry-run locally.",
  );
  process.exit(1);
}
run("Publish with changesets (npm provenance)", "pnpm", ["changeset", "publish"], {
  env: { ...process.env, NPM_CONFIG_PROVENANCE: "true" },
});
