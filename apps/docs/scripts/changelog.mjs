// The site's "Changelog" page: what each release changed, and what the next one will. The released
// notes are the packages' CHANGELOG.md files (written by `changeset version`); the coming ones are
// the pending changesets in `.changeset/`, the release notes as their authors wrote them. The Go
// module, released by git tags that changesets do not make, keeps its notes by hand in
// packages/go/CHANGELOG.md: its "Unreleased" section and its tagged versions' sections. Nothing is
// released yet: no package has a CHANGELOG.md and every version is 0.0.0, and the page says so.
// Like the "Conformance" page, it is added to the reader's copy of the contract as a trait tag: it is
// about the kit, not the service, so it never enters the contract.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The pending changesets of `<root>/.changeset`: each file's packages with their bump, and its notes.
 *
 * @returns {{ file: string, bumps: { name: string, bump: string }[], notes: string }[]}
 */
export function pendingChangesets(root) {
  const dir = join(root, ".changeset");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith(".md") && file !== "README.md")
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), "utf8");
      const [, front = "", notes = ""] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text) ?? [];
      const bumps = [...front.matchAll(/^["']?([^"'\s:]+)["']?\s*:\s*(major|minor|patch)\s*$/gm)].map(
        ([, name, bump]) => ({ name, bump }),
      );
      return { file, bumps, notes: notes.trim() };
    });
}

/** Where the Go module's notes live: it is released by git tags, and its CHANGELOG.md is kept by hand. */
export const GO_CHANGELOG = join("packages", "go", "CHANGELOG.md");
/** The Go module, as its users name it (`go get`). */
export const GO_MODULE = "github.com/tenant-integration/sdk/packages/go";

/**
 * Each published package's released notes: `{ name, changelog }` for every package with a
 * CHANGELOG.md written by `changeset version`. The Go module's hand-kept file is not one of them
 * (see {@link goChangelog}).
 */
export function releasedChangelogs(root) {
  const dirs = [join(root, "spec"), ...readdirSync(join(root, "packages")).map((name) => join(root, "packages", name))];
  return dirs
    .filter((dir) => existsSync(join(dir, "CHANGELOG.md")) && existsSync(join(dir, "package.json")))
    .filter((dir) => join(dir, "CHANGELOG.md") !== join(root, GO_CHANGELOG))
    .map((dir) => ({
      name: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name,
      changelog: readFileSync(join(dir, "CHANGELOG.md"), "utf8"),
    }));
}

/**
 * The Go module's notes (packages/go/CHANGELOG.md, kept by hand: the module is released by git
 * tags, which changesets do not make): `unreleased`, the notes under its "## Unreleased" heading, and
 * `released`, the sections of its tagged versions (`## vX.Y.Z`), newest first as the file has them.
 */
export function goChangelog(root) {
  const file = join(root, GO_CHANGELOG);
  if (!existsSync(file)) return { unreleased: "", released: [] };
  const sections = readFileSync(file, "utf8").split(/^## /m).slice(1);
  const unreleased = sections.find((section) => /^Unreleased\b/.test(section)) ?? "";
  return {
    unreleased: unreleased.replace(/^Unreleased.*\n/, "").trim(),
    released: sections
      .filter((section) => /^v\d/.test(section))
      .map((section) => ({ version: section.split("\n")[0].trim(), notes: section.replace(/^.*\n/, "").trim() })),
  };
}

/** Markdown headings moved `levels` down, so that a file's `#` stays under the page's own. */
const demote = (markdown, levels) =>
  markdown.replace(/^(#{1,6}) /gm, (_, hashes) => `${"#".repeat(Math.min(6, hashes.length + levels))} `);

/** The page's Markdown. `go` is the Go module's notes ({@link goChangelog}). */
export function changelogPage({ released, pending, go = { unreleased: "", released: [] } }) {
  const parts = [];
  if (released.length === 0 && go.released.length === 0) {
    parts.push(
      "**Nothing is released yet.** No package of the kit has a published version: each is at `0.0.0`, with no " +
        "`CHANGELOG.md`, and the Go module has no tag. The first release will carry the notes below: the pending " +
        "changesets of the repository (`.changeset/`), which `changeset version` turns into each npm and Python " +
        "package's `CHANGELOG.md`, and the Go module's unreleased notes (`packages/go/CHANGELOG.md`, kept by hand: " +
        "the module is released by a `packages/go/vX.Y.Z` tag). This page then shows those.",
    );
  } else {
    parts.push("## Released");
    for (const { name, changelog } of released)
      parts.push(`### ${name}`, demote(changelog.replace(/^# .*\n/, ""), 3).trim());
    if (go.released.length > 0) {
      parts.push(`### ${GO_MODULE} (Go)`);
      for (const { version, notes } of go.released) parts.push(`#### ${version}`, demote(notes, 4));
    }
  }
  if (go.unreleased !== "") {
    parts.push(`## Unreleased: the Go module`, `\`${GO_MODULE}\`, released by a \`packages/go/vX.Y.Z\` tag:`);
    parts.push(demote(go.unreleased, 3));
  }
  parts.push(`## Unreleased (${pending.length} pending changesets)`);
  if (pending.length === 0) parts.push("No pending changes.");
  for (const { file, bumps, notes } of pending) {
    const packages = bumps.map(({ name, bump }) => `\`${name}\` ${bump}`).join(", ");
    const body = demote(notes, 4)
      .split("\n")
      .map((line) => (line === "" ? "" : `  ${line}`))
      .join("\n");
    parts.push(`- **${packages}** (\`${file}\`)\n\n${body}`);
  }
  return parts.join("\n\n");
}

/** A copy of `contract` with the "Changelog" page (a trait tag, after the others). */
export function withChangelog(contract, root) {
  const tag = {
    name: "Changelog",
    "x-displayName": "Changelog",
    "x-traitTag": true,
    description: changelogPage({
      released: releasedChangelogs(root),
      pending: pendingChangesets(root),
      go: goChangelog(root),
    }),
  };
  return { ...contract, tags: [...(contract.tags ?? []), tag] };
}
