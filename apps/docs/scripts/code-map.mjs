// The site's "Map of the code" page: which module holds each concept of the kits in each language
// (spec/concepts.yaml, checked by `pnpm lint`). The page shows the table that CONTRIBUTING.md holds
// between its concept markers, which the lint keeps equal to the map, so the site needs no YAML
// reader of its own. Like the "Conformance" page, it is added to the reader's copy of the contract as
// a trait tag: it is about the kit, not the service, so it never enters the contract.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const BEGIN = /<!-- concepts:begin[^>]*-->\n/;
const END = "<!-- concepts:end -->";

/** The map's table from the CONTRIBUTING.md under `root`; throws when its markers are gone. */
export function conceptTable(root) {
  const text = readFileSync(join(root, "CONTRIBUTING.md"), "utf8");
  const begin = BEGIN.exec(text);
  const end = text.indexOf(END);
  if (!begin || end < begin.index) throw new Error("CONTRIBUTING.md lacks the concept markers of the map's table");
  return text.slice(begin.index + begin[0].length, end).trim();
}

/**
 * The table as the page shows it: each concept by its title alone, so that the kits' columns keep
 * their width in the reference's middle column (CONTRIBUTING.md shows each concept's summary too).
 */
export function compactTable(table) {
  return table.replace(/^\| \*\*([^*]+)\*\*: [^|]*\|/gm, "| **$1** |");
}

/** The page: what the map is, then its table. */
export function codeMapPage(table) {
  return [
    "Every kit holds each concept (the token record, the refresh, a storage, the redaction rule…) in one",
    "module named after it in that language's way, so a reader who knows one kit finds the same code in",
    "another. The map is data in the repository (`spec/concepts.yaml`), and its lint fails when a module",
    "it names is gone, when a kit's module belongs to no concept, or when a module is named otherwise",
    "without a reason. Paths are from each kit's folder, named in its column.",
    "",
    compactTable(table),
  ].join("\n");
}

/** A copy of `contract` with the "Map of the code" page (a trait tag, after the others). */
export function withCodeMap(contract, root) {
  const tag = {
    name: "Map of the code",
    "x-displayName": "Map of the code",
    "x-traitTag": true,
    description: codeMapPage(conceptTable(root)),
  };
  return { ...contract, tags: [...(contract.tags ?? []), tag] };
}
