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
import { nonNpmPackages } from "./non-npm.mjs";
import { privateMovedByNpmRelease, rehearseAlone, rehearseVersion } from "./rehearse-version.mjs";

const dryRun = process.argv.includes("--dry-run");

function run(title, command, args, options = {}) {
  console.log(`\n▶ ${title}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`✖ ${title} failed`);
    process.exit(result.status ?? 1);
  }
}

/** What the release workflow does for a package released elsewhere, and why. */
const describePlan = ({ changed, release, why }) => (changed ? `${release} (${why})` : `nothing (${why})`);

/**
 * The next release of the packages released elsewhere (tools/release/non-npm.mjs), as the rehearsal
 * found it: the version changesets wrote, its CHANGELOG.md, and what the release workflow does then.
 * Returns what is wrong.
 */
function reportNonNpm(rehearsed) {
  const problems = [];
  console.log(
    "\n▶ The packages released elsewhere: changesets versions them and writes their CHANGELOG.md; the release workflow publishes",
  );
  for (const {
    name,
    dir,
    registry,
    versionBefore,
    version,
    changelog,
    changelogWritten,
    plan,
    planError,
  } of rehearsed) {
    console.log(`  ${name} ${versionBefore} -> ${version}, ${registry}`);
    console.log(`    ${dir}/CHANGELOG.md ${changelogWritten ? "written:" : "NOT written"}`);
    // Its first version's section, headings and each entry's first line: what users will read.
    const section = changelog.split(/^## /m)[1] ?? "";
    const outline = `## ${section}`.split("\n").filter((line) => /^(#|- )/.test(line));
    for (const line of outline) console.log(`      ${line.length > 100 ? `${line.slice(0, 99)}…` : line}`);
    if (plan) console.log(`    release: ${describePlan(plan)}`);
    if (!changelogWritten) problems.push(`${name}: changeset version wrote no ${dir}/CHANGELOG.md`);
    if (planError) problems.push(`${name}: the release would be refused: ${planError}`);
  }
  return problems;
}

/** What a minor changeset naming one package released elsewhere, alone, did; returns what is wrong. */
function reportAlone({
  name,
  versionBefore,
  version,
  othersMoved,
  changelogWritten,
  plan,
  planError,
  built,
  contents,
}) {
  const problems = [];
  console.log(
    `  ${name}: ${versionBefore} -> ${version}; ${othersMoved.length === 0 ? "no other package moved" : `also moved ${othersMoved.join(", ")}`}; CHANGELOG.md ${changelogWritten ? "written" : "NOT written"}`,
  );
  if (plan) console.log(`    release: ${describePlan(plan)}`);
  if (built) {
    console.log(`    built ${built.join(", ")}${contents?.includes("CHANGELOG.md") ? ", CHANGELOG.md inside" : ""}`);
  }
  if (othersMoved.length > 0) problems.push(`a changeset for ${name} alone also moved ${othersMoved.join(", ")}`);
  if (!changelogWritten || version === versionBefore)
    problems.push(`${name}: a changeset naming it must bump its package.json and write its CHANGELOG.md`);
  if (planError || !plan?.changed)
    problems.push(`${name}: the workflow would not release the new version: ${planError ?? plan?.why}`);
  if (built && (!built.every((file) => file.includes(`-${version}`)) || !contents?.includes("CHANGELOG.md")))
    problems.push(`${name}: every artifact must carry the version changesets wrote, and the sources its CHANGELOG.md`);
  return problems;
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
  for (const { name, version, changelogWritten, packed } of rehearsed.published) {
    const shipped = ["CHANGELOG.md", "LICENSE", "README.md"].filter((file) => packed.includes(file));
    console.log(
      `  ${name}@${version}: CHANGELOG.md ${changelogWritten ? "written" : "NOT written"}; tarball has ${shipped.join(", ") || "none of them"}`,
    );
    if (!changelogWritten || shipped.length !== 3)
      failures.push(`${name}: after changeset version, the tarball must carry CHANGELOG.md, LICENSE and README.md`);
  }
  failures.push(...reportNonNpm(rehearsed.nonNpm));

  console.log("\n▶ Each package released elsewhere alone: a minor changeset naming only it, in a temporary copy");
  for (const entry of nonNpmPackages) failures.push(...reportAlone(rehearseAlone(entry)));

  const moved = privateMovedByNpmRelease();
  console.log(
    `\n▶ A patch for every npm package moves no private package: ${moved.length === 0 ? "none moved" : moved.join(", ")}`,
  );
  if (moved.length > 0)
    failures.push(
      `an npm release moves private packages: ${moved.join(", ")} (add them to "ignore" in .changeset/config.json)`,
    );

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
