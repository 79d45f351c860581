// The site's "Changelog" page: what each release changed, and what the next one will. The released
// notes are the packages' CHANGELOG.md files (written by `changeset version`); the coming ones are
// the pending changesets in `.changeset/`, the release notes as their authors wrote them. Every
// package of the kit is versioned this way, the npm packages and the ones released elsewhere alike
// (the Python SDK to PyPI, the Go module by its `packages/go/vX.Y.Z` tag). Nothing is released yet:
// no package has a CHANGELOG.md and every version is 0.0.0, and the page says so.
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

/**
 * Each package's released notes: `{ name, dir, changelog }` for every package (the contract in spec/
 * and each folder of packages/; `dir` relative to `root`) with a CHANGELOG.md, which
 * `changeset version` writes.
 */
export function releasedChangelogs(root) {
  const dirs = ["spec", ...readdirSync(join(root, "packages")).map((name) => `packages/${name}`)];
  return dirs
    .filter((dir) => existsSync(join(root, dir, "CHANGELOG.md")) && existsSync(join(root, dir, "package.json")))
    .map((dir) => ({
      name: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")).name,
      dir,
      changelog: readFileSync(join(root, dir, "CHANGELOG.md"), "utf8"),
    }));
}

/** Markdown headings moved `levels` down, so that a file's `#` stays under the page's own. */
const demote = (markdown, levels) =>
  markdown.replace(/^(#{1,6}) /gm, (_, hashes) => `${"#".repeat(Math.min(6, hashes.length + levels))} `);

/** The page's Markdown: the released notes ({@link releasedChangelogs}) and the pending changesets. */
export function changelogPage({ released, pending }) {
  const parts = [];
  if (released.length === 0) {
    parts.push(
      "**Nothing is released yet.** No package of the kit has a published version: each is at `0.0.0`, with no " +
        "`CHANGELOG.md`. The first release will carry the notes below: the pending changesets of the repository " +
        "(`.changeset/`), which `changeset version` turns into each package's `CHANGELOG.md`, the npm packages', " +
        "the Python SDK's and the Go module's alike. This page then shows those.",
    );
  } else {
    parts.push("## Released");
    // Under the package's `###`, the file's `## <version>` becomes `####`, its `### Minor Changes` `#####`.
    for (const { name, changelog } of released)
      parts.push(`### ${name}`, demote(changelog.replace(/^# .*\n/, ""), 2).trim());
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
    description: changelogPage({ released: releasedChangelogs(root), pending: pendingChangesets(root) }),
  };
  return { ...contract, tags: [...(contract.tags ?? []), tag] };
}
