#!/usr/bin/env node
// Whether a push releases the Java SDK to Maven Central, and under which coordinates. Its version is
// packages/java/package.json's (changesets bumps it; the Maven build reads it: the reactor's version is
// `${revision}`, set from that file by packages/java/scripts/java.mjs), so the release workflow deploys
// only when the push moved it (version-change.mjs), i.e. when a "Version packages" pull request that
// versioned it was merged.
//
//   node tools/release/java-release.mjs <commit before the push>
//
// prints `changed=true|false`, `version=<x.y.z>` and `group=<groupId>`, the lines the workflow appends
// to $GITHUB_OUTPUT. Nothing is released at 0.0.0, the placeholder version of every unreleased package;
// with `--check-central` it fails when Maven Central has the version already (it never takes a version
// twice), which the deploy job asks before it uploads.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { versionChange } from "./version-change.mjs";

/** The folder of the Java reactor. */
export const JAVA_DIR = "packages/java";

/** Maven Central's repository, whose `maven-metadata.xml` lists every version of an artifact. */
export const CENTRAL = "https://repo1.maven.org/maven2";

/**
 * The reactor's groupId and the artifactIds it publishes: the parent POM (the modules' POMs name it)
 * and every module whose POM does not skip the deploy (the generator and the conformance actor do).
 */
export function coordinates(cwd) {
  const parent = readFileSync(join(cwd, JAVA_DIR, "pom.xml"), "utf8");
  const group = /<groupId>([^<]+)<\/groupId>/.exec(parent)?.[1];
  const parentId = /<\/groupId>\s*<artifactId>([^<]+)<\/artifactId>/.exec(parent)?.[1];
  const modules = [...parent.matchAll(/<module>([^<]+)<\/module>/g)].map(([, module]) => module);
  const artifacts = modules
    .map((module) => {
      const pom = readFileSync(join(cwd, JAVA_DIR, module, "pom.xml"), "utf8");
      const artifactId = /<\/parent>[\s\S]*?<artifactId>([^<]+)<\/artifactId>/.exec(pom)?.[1];
      const deploys = !/<maven\.deploy\.skip>true<\/maven\.deploy\.skip>/.test(pom);
      return deploys ? artifactId : undefined;
    })
    .filter((id) => id !== undefined);
  if (!group || !parentId || artifacts.length === 0)
    throw new Error(`${JAVA_DIR}/pom.xml: no groupId, artifactId or published module`);
  return { group, artifacts: [parentId, ...artifacts] };
}

/**
 * `{ version, previous, changed, why, group, artifacts }` for the tree at `cwd`: its version, the one
 * before the push (`previous`, or the one at the commit `before`; null when unreadable), whether this
 * push releases it and why, and the Maven coordinates (`group:artifact:version` for each artifact).
 * Nothing is ever released at 0.0.0, the version of an unreleased package, even when the version
 * before the push cannot be read.
 */
export function javaRelease({ cwd, before, previous }) {
  const change = versionChange({ cwd, dir: JAVA_DIR, before, previous });
  const unreleased = change.version === "0.0.0";
  const why = unreleased
    ? "0.0.0 is the version of an unreleased package: a changeset naming @tenant-integration/java releases it"
    : change.changed
      ? `from ${change.previous ?? "an unknown version"}`
      : "its version did not change";
  return { ...change, changed: change.changed && !unreleased, why, ...coordinates(cwd) };
}

/**
 * The versions of `group:artifact` Maven Central holds (its `maven-metadata.xml`; none when it answers
 * 404, i.e. the artifact was never published).
 *
 * @throws Error when Central cannot be asked (the deploy must not guess)
 */
export async function centralVersions(group, artifact, fetchImpl = fetch) {
  const url = `${CENTRAL}/${group.replaceAll(".", "/")}/${artifact}/maven-metadata.xml`;
  const response = await fetchImpl(url, { signal: AbortSignal.timeout(30_000) });
  if (response.status === 404) return [];
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return [...(await response.text()).matchAll(/<version>([^<]+)<\/version>/g)].map(([, version]) => version);
}

/** Refuses a release of `version` when Maven Central has it for any of the artifacts: it never takes one twice. */
export async function checkCentral({ version, group, artifacts }, fetchImpl = fetch) {
  for (const artifact of artifacts) {
    if ((await centralVersions(group, artifact, fetchImpl)).includes(version))
      throw new Error(`Maven Central has ${group}:${artifact}:${version} already: it never takes a version twice`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const before = process.argv.slice(2).find((arg) => !arg.startsWith("--"));
  const release = javaRelease({ cwd: process.cwd(), before });
  console.error(`@tenant-integration/java: ${release.previous ?? "(unknown)"} before the push, ${release.version} now`);
  if (release.changed && process.argv.includes("--check-central")) await checkCentral(release);
  console.log(`changed=${release.changed}`);
  console.log(`version=${release.version}`);
  console.log(`group=${release.group}`);
}
