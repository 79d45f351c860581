// The map of the code (spec/concepts.yaml) as `pnpm lint` checks it (scripts/concepts-lint.mjs): the
// repository passes, and the check fails, naming the file and the concept, on a module the map names
// that is gone, a source module no concept names, a module not named as its concept, a stale reason,
// and a kit a concept leaves out without saying why.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module of the lint, without type declarations
import * as concepts from "../scripts/concepts-lint.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

type Entry = string | { path: string; why?: string };
type Concept = { title: string; name: string; modules?: Record<string, Entry[]>; absent?: Record<string, string> };
type Kit = { sources: string[]; excluded?: Record<string, string[]>; root?: string; hide?: string };
type ConceptMap = {
  kits: Record<string, Kit>;
  concepts: { "token-record": Concept; "token-manager": Concept } & Record<string, Concept>;
};

const problemsOf = (at: string, map: ConceptMap): string[] => concepts.checkConcepts(at, map).problems;

/** A throwaway tree of two kits (TypeScript, Go) holding `files`, and a map of it that passes. */
const folders: string[] = [];
function tree(files: string[]): string {
  const at = mkdtempSync(join(tmpdir(), "concepts-"));
  folders.push(at);
  for (const file of files) {
    mkdirSync(dirname(join(at, file)), { recursive: true });
    writeFileSync(join(at, file), "// a module\n");
  }
  return at;
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const files = [
  "ts/src/token-record.ts",
  "ts/src/token-record.test.ts",
  "ts/src/generated/openapi.ts",
  "go/tokenmanager/tokenrecord.go",
  "go/tokenmanager/tokenrecord_test.go",
  "go/tokenmanager/manager.go",
];
const passing = (): ConceptMap => ({
  kits: {
    typescript: {
      sources: ["ts/src/**/*.ts"],
      excluded: { tests: ["**/*.test.ts"], generated: ["ts/src/generated/**"] },
    },
    go: { sources: ["go/**/*.go"], excluded: { tests: ["**/*_test.go"] } },
  },
  concepts: {
    "token-record": {
      title: "Token record",
      name: "token-record",
      modules: { typescript: ["ts/src/token-record.ts"], go: ["go/tokenmanager/tokenrecord.go"] },
    },
    "token-manager": {
      title: "Token manager",
      name: "manager",
      modules: { go: ["go/tokenmanager/manager.go"] },
      absent: { typescript: "not in this tree" },
    },
  },
});

describe("the map of the code", () => {
  it("holds for the repository: every module named exists, every kit's source module is mapped", () => {
    const result = concepts.checkConcepts(root);
    expect(result.problems).toEqual([]);
    expect(result.kits).toBeGreaterThanOrEqual(3);
    expect(result.concepts).toBeGreaterThan(30);
  });

  it("reads each kit's hand-written modules, leaving out tests and generated code by pattern", () => {
    const map = concepts.readConceptMap(root);
    const typescript: string[] = concepts.kitSources(root, map.kits.typescript);
    const go: string[] = concepts.kitSources(root, map.kits.go);
    expect(typescript).toContain("packages/token-manager/src/token-record.ts");
    expect(typescript.filter((path) => path.endsWith(".test.ts"))).toEqual([]);
    expect(go).toContain("packages/go/tokenmanager/tokenrecord.go");
    expect(go.filter((path) => path.endsWith("_test.go") || path.endsWith(".gen.go"))).toEqual([]);
  });

  it("passes a tree whose every module is mapped and named as its concept", () => {
    expect(problemsOf(tree(files), passing())).toEqual([]);
  });
});

describe("the check fails, naming the file and the concept", () => {
  it("on a module the map names that does not exist (moved or deleted)", () => {
    const at = tree(files.filter((file) => file !== "go/tokenmanager/tokenrecord.go"));
    expect(problemsOf(at, passing())).toEqual([
      `go/tokenmanager/tokenrecord.go: no such module, named by concept "token-record" (go) in spec/concepts.yaml`,
    ]);
  });

  it("on a source module of a kit that no concept names", () => {
    const at = tree([...files, "go/tokenmanager/signin.go"]);
    expect(problemsOf(at, passing())).toEqual([
      expect.stringMatching(/^go\/tokenmanager\/signin\.go: a go source module that no concept names/),
    ]);
  });

  it("on a module not named as its concept, unless its entry says why", () => {
    const at = tree([...files, "ts/src/record.ts"]);
    const map = passing();
    map.concepts["token-record"].modules = {
      typescript: ["ts/src/token-record.ts", "ts/src/record.ts"],
      go: ["go/tokenmanager/tokenrecord.go"],
    };
    expect(problemsOf(at, map)).toEqual([
      `ts/src/record.ts: holds concept "token-record" (typescript) but is not named "token-record"; rename it, or say \`why\` in spec/concepts.yaml`,
    ]);
    map.concepts["token-record"].modules = {
      typescript: ["ts/src/token-record.ts", { path: "ts/src/record.ts", why: "a reason" }],
      go: ["go/tokenmanager/tokenrecord.go"],
    };
    expect(problemsOf(at, map)).toEqual([]);
  });

  it("on a reason given for a name that needs none", () => {
    const map = passing();
    map.concepts["token-record"].modules = {
      typescript: [{ path: "ts/src/token-record.ts", why: "stale" }],
      go: ["go/tokenmanager/tokenrecord.go"],
    };
    expect(problemsOf(tree(files), map)).toEqual([
      `ts/src/token-record.ts: is named "token-record" as concept "token-record" wants; drop its stale \`why\``,
    ]);
  });

  it("on a kit a concept leaves out without saying why, as a new kit joining does", () => {
    const map = passing();
    map.kits.java = { sources: ["java/**/*.java"] };
    map.concepts["token-manager"].absent = { typescript: "not in this tree" };
    const problems = problemsOf(tree([...files, "java/TokenRecord.java"]), map);
    expect(problems).toEqual([
      expect.stringMatching(/^concept "token-record" \(java\): names no module and gives no reason/),
      expect.stringMatching(/^concept "token-manager" \(java\): names no module and gives no reason/),
      expect.stringMatching(/^java\/TokenRecord\.java: a java source module that no concept names/),
    ]);
  });

  it("on a misspelt key, which would otherwise drop a rule unseen", () => {
    const map = passing();
    const misspelt = { ...map.concepts["token-manager"], asbent: map.concepts["token-manager"].absent };
    delete misspelt.absent;
    map.concepts["token-manager"] = misspelt;
    expect(problemsOf(tree(files), map)).toEqual([
      `spec/concepts.yaml: concept "token-manager" has an unknown key "asbent"`,
    ]);
  });

  it("on a concept naming a kit the map does not have", () => {
    const map = passing();
    map.concepts["token-record"].modules = { ...map.concepts["token-record"].modules, rust: ["x.rs"] };
    expect(problemsOf(tree(files), map)).toEqual([
      `spec/concepts.yaml: concept "token-record" names kit "rust", which \`kits\` lacks`,
    ]);
  });
});

describe("the map's table in CONTRIBUTING.md", () => {
  it("is the map as it stands, a row per concept and a column per kit", () => {
    const map = concepts.readConceptMap(root);
    expect(concepts.tableProblems(root, map)).toEqual([]);
    const table: string = concepts.conceptTable(map);
    expect(table).toContain("| **Token record**: ");
    expect(table).toContain(
      "`token-manager/src/token-record.ts` | `_token_record.py` | `tokenmanager/tokenrecord.go` |",
    );
  });

  it("shows a kit's paths from its root, without the folders it hides", () => {
    const map = passing();
    map.kits.go = {
      sources: ["go/**/*.go"],
      excluded: { tests: ["**/*_test.go"] },
      root: "go/",
      hide: "tokenmanager/",
    };
    expect(concepts.conceptTable(map)).toContain("| `ts/src/token-record.ts` | `tokenrecord.go` |");
  });

  it("fails when stale, and is written anew between its markers", () => {
    const at = tree(files);
    const stale = `# Contributing\n\n${concepts.CONCEPTS_BEGIN}\n| old |\n${concepts.CONCEPTS_END}\n\nmore\n`;
    writeFileSync(join(at, "CONTRIBUTING.md"), stale);
    expect(concepts.tableProblems(at, passing())).toEqual([
      "CONTRIBUTING.md: the map's table differs from spec/concepts.yaml; run node spec/scripts/concepts-lint.mjs --write",
    ]);
    const written: string = concepts.withTable(stale, concepts.conceptTable(passing()));
    expect(written).toMatch(/^# Contributing\n\n<!-- concepts:begin .*-->\n\| concept \| typescript/);
    expect(written).toMatch(/\n<!-- concepts:end -->\n\nmore\n$/);
    writeFileSync(join(at, "CONTRIBUTING.md"), written);
    expect(concepts.tableProblems(at, passing())).toEqual([]);
  });
});

describe("names and patterns", () => {
  it.each([
    ["packages/token-manager/src/refresh-intent.ts", "refresh-intent"],
    ["packages/python/src/tenant_integration/_refresh_intent.py", "refresh-intent"],
    ["packages/go/tokenmanager/refreshintent.go", "refresh-intent"],
    ["packages/python/src/tenant_integration/storage/file.py", "file-storage"],
    ["packages/client/src/client-state.ts", "client"],
    ["packages/go/redisstorage/redisstorage.go", "storage"],
    ["packages/java/redis/src/main/java/io/github/tenantintegration/redisstorage/RedisLock.java", "lock"],
  ])("%s is named %s", (path, name) => {
    expect(concepts.namedAs(path, name)).toBe(true);
  });

  it("does not take a module of another name", () => {
    expect(concepts.namedAs("packages/go/tokenmanager/storage.go", "lock")).toBe(false);
    expect(concepts.namedAs("packages/python/src/tenant_integration/_manager_core.py", "session")).toBe(false);
  });

  it("matches `**` across folders and `*` within one", () => {
    expect(concepts.globToRegExp("**/*_test.go").test("packages/go/transport/retry_test.go")).toBe(true);
    expect(concepts.globToRegExp("**/*_test.go").test("retry_test.go")).toBe(true);
    expect(concepts.globToRegExp("packages/go/*.go").test("packages/go/transport/retry.go")).toBe(false);
    expect(concepts.globToRegExp("packages/go/api/**").test("packages/go/api/scope/scope.gen.go")).toBe(true);
  });
});
