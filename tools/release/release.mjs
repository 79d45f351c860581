#!/usr/bin/env node
// `pnpm release [--dry-run]`: builds every package, then publishes the public ones with changesets
// (npm provenance on). With --dry-run it builds and packs and lists exactly what would be
// published — every package, version and file — and publishes nothing.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dryRun = process.argv.includes("--dry-run");

function run(title, command, args, options = {}) {
  console.log(`\n▶ ${title}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`✖ ${title} failed`);
    process.exit(result.status ?? 1);
  }
}

/** Every workspace package folder that would be published (not private). */
export function publicPackages() {
  const folders = ["spec", ...["packages"].flatMap((d) => readdirSync(join(root, d)).map((name) => join(d, name)))];
  return folders
    .filter((dir) => existsSync(join(root, dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => !manifest.private);
}

run("Build every package", "pnpm", ["turbo", "run", "build"]);

if (dryRun) {
  console.log("\n▶ Pending version bumps (changesets)");
  spawnSync("pnpm", ["changeset", "status", "--verbose"], { cwd: root, stdio: "inherit" });

  console.log("\n▶ What would be published (pnpm pack --dry-run)");
  let total = 0;
  for (const { dir, manifest } of publicPackages()) {
    const out = execFileSync("pnpm", ["pack", "--dry-run", "--json"], { cwd: join(root, dir), encoding: "utf8" });
    const packed = JSON.parse(out.slice(out.indexOf("{")));
    const access = manifest.publishConfig?.access ?? "(no publishConfig.access)";
    const provenance = manifest.publishConfig?.provenance ? "provenance" : "no provenance";
    console.log(`\n${packed.name}@${packed.version}  (${relative(root, join(root, dir))}, ${access}, ${provenance})`);
    for (const file of packed.files) console.log(`  ${file.path}`);
    total += 1;
  }
  console.log(`\n${total} packages would be published. Nothing was published (--dry-run).`);
  process.exit(0);
}

if (!process.env.CI) {
  console.error("Publishing runs in CI only (the release workflow), where npm provenance can be attested. Use --dry-run locally.");
  process.exit(1);
}
run("Publish with changesets (npm provenance)", "pnpm", ["changeset", "publish"], {
  env: { ...process.env, NPM_CONFIG_PROVENANCE: "true" },
});
