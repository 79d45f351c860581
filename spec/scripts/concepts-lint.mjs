// The map of the code (spec/concepts.yaml), checked against the code (issue 38, point 3): the same
// concept in the same-named module in every kit, as a fact a machine holds, not a habit. `pnpm lint`
// runs it (scripts/lint.mjs); spec/test/concepts-lint.test.ts shows it failing on a missing module,
// an unmapped module, a misnamed one and a kit left out. Four rules:
//
// 1. Every module a concept names exists.
// 2. A module is named as its concept's `name`, or its entry says `why` not. Names are compared
//    after dropping the extension, a leading `_` and every `-` and `_`, in lower case; the module's
//    folder may carry part of the name (Python's storage/file.py is "file-storage"), and the name
//    may lead or end the module's (client-state.ts is "client", Java's RedisLock.java and Go's
//    redisstorage.go are a Redis "lock" and "storage"). A `why` on a module that is named as its
//    concept is stale and refused.
// 3. Every hand-written source module of a kit (its `sources`, less its `excluded` patterns: tests,
//    generated code, examples, tools) belongs to some concept of that kit.
// 4. Every concept names its modules in every kit, or says why that kit has none (`absent`).
//
// The map is shown as a table in CONTRIBUTING.md ("The map of the code", between the CONCEPTS_BEGIN
// and CONCEPTS_END markers), which the docs site's "Map of the code" page shows too; `pnpm lint`
// fails when that table is stale, and `node spec/scripts/concepts-lint.mjs --write` writes it anew.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

/** The map's path, from the repository root. */
export const MAP_PATH = "spec/concepts.yaml";

/** Where the map is shown as a table, between these two markers. */
export const TABLE_PATH = "CONTRIBUTING.md";
export const CONCEPTS_BEGIN = "<!-- concepts:begin (written by node spec/scripts/concepts-lint.mjs --write) -->";
export const CONCEPTS_END = "<!-- concepts:end -->";

/** Folders never walked: installed packages, build output of tools, VCS and caches. */
const SKIPPED_FOLDERS = new Set(["node_modules", "__pycache__", ".git", ".turbo", ".venv", "dist", "target"]);

/** The map as data: `{ kits, concepts }`, parsed from spec/concepts.yaml under `root`. */
export function readConceptMap(root) {
  return parse(readFileSync(join(root, MAP_PATH), "utf8"));
}

/**
 * A path glob as a regular expression over repository-relative paths: `**` spans folders, `*` and
 * `?` stay within one; everything else is literal.
 */
export function globToRegExp(glob) {
  let pattern = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (glob.startsWith("**/", i)) {
      pattern += "(?:.*/)?";
      i += 2;
    } else if (glob.startsWith("**", i)) {
      pattern += ".*";
      i += 1;
    } else if (char === "*") pattern += "[^/]*";
    else if (char === "?") pattern += "[^/]";
    else pattern += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${pattern}$`);
}

/** The folder a glob's matches all lie under: its segments before the first one with a wildcard. */
function globBase(glob) {
  const segments = glob.split("/");
  const fixed = segments.findIndex((segment) => /[*?]/.test(segment));
  return segments.slice(0, fixed === -1 ? segments.length - 1 : fixed).join("/");
}

/** Every file under `folder` (repository-relative), skipping SKIPPED_FOLDERS and hidden folders. */
function filesUnder(root, folder) {
  const found = [];
  const walk = (relative) => {
    const absolute = join(root, relative);
    if (!existsSync(absolute)) return;
    for (const entry of readdirSync(absolute, { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name) && !entry.name.startsWith(".")) walk(path);
      } else if (entry.isFile()) found.push(path);
    }
  };
  walk(folder);
  return found;
}

/** The hand-written source modules of a kit: what its `sources` match, less its `excluded` patterns. */
export function kitSources(root, kit) {
  const excluded = Object.values(kit.excluded ?? {})
    .flat()
    .map(globToRegExp);
  const modules = new Set();
  for (const glob of kit.sources ?? []) {
    const matches = globToRegExp(glob);
    for (const path of filesUnder(root, globBase(glob))) {
      if (matches.test(path) && !excluded.some((pattern) => pattern.test(path))) modules.add(path);
    }
  }
  return [...modules].sort();
}

/** A name as the rule compares it: no extension, no leading `_`, no `-` or `_`, lower case. */
export function normalName(name) {
  return name
    .replace(/\.[^.]*$/, "")
    .replace(/\.gen$/, "")
    .replace(/^_+/, "")
    .replace(/[-_]/g, "")
    .toLowerCase();
}

/**
 * Whether the module at `path` is named as `name`: its file name, or its folder's and its own
 * together, starts or ends with the name.
 */
export function namedAs(path, name) {
  const own = normalName(basename(path));
  const folder = normalName(basename(dirname(path)));
  const wanted = normalName(name);
  return [own, folder + own, own + folder].some(
    (candidate) => candidate.startsWith(wanted) || candidate.endsWith(wanted),
  );
}

/** A concept's entries for one kit, each as `{ path, why }`. */
function entriesOf(modules) {
  return (modules ?? []).map((entry) => (typeof entry === "string" ? { path: entry, why: undefined } : entry));
}

/** The keys a kit and a concept may have: another is a typo that would hide a rule. */
const KIT_KEYS = new Set(["label", "root", "hide", "sources", "excluded"]);
const CONCEPT_KEYS = new Set(["title", "summary", "name", "modules", "absent"]);

/** The keys of `object` that `allowed` lacks. */
const unknownKeys = (object, allowed) => Object.keys(object ?? {}).filter((key) => !allowed.has(key));

/** The problems of the map's shape: what rules 1 to 4 need to be read at all. */
function shapeProblems(map) {
  const problems = [];
  if (!map || typeof map.kits !== "object" || typeof map.concepts !== "object") {
    return [`${MAP_PATH}: wants two maps, \`kits\` and \`concepts\``];
  }
  for (const [id, kit] of Object.entries(map.kits)) {
    if (!Array.isArray(kit?.sources) || kit.sources.length === 0) {
      problems.push(`${MAP_PATH}: kit "${id}" names no \`sources\` (globs of its hand-written modules)`);
    }
    for (const key of unknownKeys(kit, KIT_KEYS)) problems.push(`${MAP_PATH}: kit "${id}" has an unknown key "${key}"`);
  }
  for (const [id, concept] of Object.entries(map.concepts)) {
    for (const key of unknownKeys(concept, CONCEPT_KEYS)) {
      problems.push(`${MAP_PATH}: concept "${id}" has an unknown key "${key}"`);
    }
    if (typeof concept?.name !== "string" || typeof concept?.title !== "string") {
      problems.push(`${MAP_PATH}: concept "${id}" wants a \`title\` and the \`name\` its modules carry`);
    }
    for (const kit of [...Object.keys(concept?.modules ?? {}), ...Object.keys(concept?.absent ?? {})]) {
      if (!(kit in map.kits)) problems.push(`${MAP_PATH}: concept "${id}" names kit "${kit}", which \`kits\` lacks`);
    }
    for (const [kit, modules] of Object.entries(concept?.modules ?? {})) {
      for (const entry of entriesOf(modules)) {
        if (typeof entry?.path !== "string") {
          problems.push(`${MAP_PATH}: concept "${id}" (${kit}) has an entry with no path: ${JSON.stringify(entry)}`);
        }
      }
    }
  }
  return problems;
}

/** Rules 1, 2 and 4 for one concept. */
function conceptProblems(root, map, id, concept) {
  const problems = [];
  for (const kit of Object.keys(map.kits)) {
    const entries = entriesOf(concept.modules?.[kit]);
    const absent = concept.absent?.[kit];
    if (entries.length === 0 && !absent) {
      problems.push(
        `concept "${id}" (${kit}): names no module and gives no reason; list the module that holds it, ` +
          `or say why the ${kit} kit has none under \`absent\``,
      );
    }
    if (entries.length > 0 && absent) {
      problems.push(`concept "${id}" (${kit}): names modules and says they are absent; keep one`);
    }
    for (const { path, why } of entries) {
      if (!existsSync(join(root, path)) || !statSync(join(root, path)).isFile()) {
        problems.push(`${path}: no such module, named by concept "${id}" (${kit}) in ${MAP_PATH}`);
      } else if (!namedAs(path, concept.name) && !why) {
        problems.push(
          `${path}: holds concept "${id}" (${kit}) but is not named "${concept.name}"; rename it, ` +
            `or say \`why\` in ${MAP_PATH}`,
        );
      } else if (namedAs(path, concept.name) && why) {
        problems.push(`${path}: is named "${concept.name}" as concept "${id}" wants; drop its stale \`why\``);
      }
    }
  }
  return problems;
}

/** Rule 3 for one kit: its source modules that no concept names. */
function unmappedProblems(root, map, kitId) {
  const named = new Set(
    Object.values(map.concepts).flatMap((concept) => entriesOf(concept.modules?.[kitId]).map((entry) => entry.path)),
  );
  return kitSources(root, map.kits[kitId])
    .filter((path) => !named.has(path))
    .map(
      (path) =>
        `${path}: a ${kitId} source module that no concept names; add it to the concept it holds in ` +
        `${MAP_PATH} (or a new concept), or exclude it by a pattern if it is generated, a test or a tool`,
    );
}

/**
 * Checks the map against the code under `root`. Returns `{ problems, kits, concepts }`: each problem
 * names the file and the concept; the counts say what was checked.
 */
export function checkConcepts(root, map = readConceptMap(root)) {
  const shape = shapeProblems(map);
  if (shape.length > 0) return { problems: shape, kits: 0, concepts: 0 };
  const problems = [
    ...Object.entries(map.concepts).flatMap(([id, concept]) => conceptProblems(root, map, id, concept)),
    ...Object.keys(map.kits).flatMap((kit) => unmappedProblems(root, map, kit)),
  ];
  return { problems, kits: Object.keys(map.kits).length, concepts: Object.keys(map.concepts).length };
}

/**
 * A module's path as the table shows it, in code type: from its kit's `root`, without the folders
 * its kit's `hide` names (Java's `src/main/java/<package>/`).
 */
function shownPath(kit, path) {
  const root = kit.root ?? "";
  const shown = path.startsWith(root) ? path.slice(root.length) : path;
  return `\`${kit.hide ? shown.replace(kit.hide, "") : shown}\``;
}

/**
 * The map as a Markdown table: a row per concept, a column per kit, each cell the modules that hold
 * the concept there (from the kit's `root`), or "none" and why.
 */
export function conceptTable(map) {
  const kits = Object.entries(map.kits);
  const head = `| concept | ${kits.map(([id, kit]) => `${kit.label ?? id} (\`${kit.root ?? ""}\`)`).join(" | ")} |`;
  const rule = `|---|${kits.map(() => "---").join("|")}|`;
  const rows = Object.values(map.concepts).map((concept) => {
    const cells = kits.map(([id, kit]) => {
      const entries = entriesOf(concept.modules?.[id]);
      if (entries.length === 0) return `none: ${concept.absent?.[id] ?? "?"}`;
      return entries.map((entry) => shownPath(kit, entry.path)).join(", ");
    });
    return `| **${concept.title}**: ${concept.summary ?? ""} | ${cells.join(" | ")} |`;
  });
  return [head, rule, ...rows].join("\n");
}

/** TABLE_PATH's text with the table between the markers replaced by `table`; undefined without markers. */
export function withTable(text, table) {
  const begin = text.indexOf(CONCEPTS_BEGIN);
  const end = text.indexOf(CONCEPTS_END);
  if (begin === -1 || end < begin) return undefined;
  return `${text.slice(0, begin + CONCEPTS_BEGIN.length)}\n${table}\n${text.slice(end)}`;
}

/** The problem of the shown table: missing markers or a stale table, else none. */
export function tableProblems(root, map) {
  const text = readFileSync(join(root, TABLE_PATH), "utf8");
  const written = withTable(text, conceptTable(map));
  if (written === undefined) return [`${TABLE_PATH}: lacks the markers of the map's table (${CONCEPTS_BEGIN})`];
  if (written !== text) {
    return [`${TABLE_PATH}: the map's table differs from ${MAP_PATH}; run node spec/scripts/concepts-lint.mjs --write`];
  }
  return [];
}

// `node spec/scripts/concepts-lint.mjs [--write]`: checks the map, or writes its table anew.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const map = readConceptMap(root);
  if (process.argv.includes("--write")) {
    const written = withTable(readFileSync(join(root, TABLE_PATH), "utf8"), conceptTable(map));
    if (written === undefined) throw new Error(`${TABLE_PATH} lacks the markers of the map's table`);
    writeFileSync(join(root, TABLE_PATH), written);
  }
  const problems = [...checkConcepts(root, map).problems, ...tableProblems(root, map)];
  for (const problem of problems) console.error(`✖ ${problem}`);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
