#!/usr/bin/env node
// Validates the token store format (scripts/token-store.mjs: its schemas compile, its test vectors
// fit their schema) and the contract: Redocly lint on the multi-file root, the contract's own rules
// (scripts/contract-rules.mjs) and Spectral (OWASP) on the bundle, the contract's marks wherever a
// user meets a claim (scripts/marks-lint.mjs: the kits' generated code, READMEs, docs samples), the
// map of the code against the kits' modules (scripts/concepts-lint.mjs: spec/concepts.yaml), and a
// breaking-change check with optic against the contract of the last release. Each step prints
// its own findings; the first failing step stops the run with exit code 1.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkBreakingChanges } from "./breaking-changes.mjs";
import { checkConcepts, readConceptMap, tableProblems } from "./concepts-lint.mjs";
import { checkContractRules } from "./contract-rules.mjs";
import { checkMarks } from "./marks-lint.mjs";
import { checkTokenStore } from "./token-store.mjs";

const specDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(specDir, "node_modules", ".bin", name);

function step(title, command, args) {
  console.log(`\n▶ ${title}`);
  const result = spawnSync(command, args, { cwd: specDir, stdio: "inherit", env: { ...process.env, NO_COLOR: "1" } });
  if (result.status !== 0) {
    console.error(`\n✖ ${title} failed.`);
    process.exit(1);
  }
  console.log(`✔ ${title}`);
}

console.log("\n▶ The token store's schemas and test vectors (scripts/token-store.mjs)");
const storeProblems = checkTokenStore({ specDir });
if (storeProblems.length > 0) {
  console.error(storeProblems.map((p) => `  ✖ ${p}`).join("\n"));
  console.error("\n✖ The token store's schemas and test vectors failed.");
  process.exit(1);
}
console.log("✔ The token store's schemas and test vectors");

step("Redocly lint (recommended-strict and the stricter rules of redocly.yaml)", bin("redocly"), [
  "lint",
  "openapi.yaml",
  "--format=codeframe",
]);
if (!existsSync(join(specDir, "dist", "openapi.yaml"))) {
  console.error(
    "dist/openapi.yaml is missing: run `pnpm --filter @tenant-integration/openapi bundle` (turbo's lint runs build first).",
  );
  process.exit(1);
}
console.log("\n▶ The contract's own rules (scripts/contract-rules.mjs)");
const violations = checkContractRules(JSON.parse(readFileSync(join(specDir, "dist", "openapi.json"), "utf8")));
if (violations.length > 0) {
  console.error(violations.map((v) => `  ✖ ${v}`).join("\n"));
  console.error("\n✖ The contract's own rules failed.");
  process.exit(1);
}
console.log("✔ The contract's own rules");

console.log("\n▶ The contract's marks wherever a user meets a claim (scripts/marks-lint.mjs)");
const marks = checkMarks(join(specDir, ".."), JSON.parse(readFileSync(join(specDir, "dist", "openapi.json"), "utf8")));
if (marks.problems.length > 0) {
  console.error(marks.problems.map((problem) => `  ✖ ${problem}`).join("\n"));
  console.error(
    "\n✖ A claim the service description does not make is unmarked: say it is assumed (with the RFC), " +
      "or rest it on a section of the description (spec/scripts/marks-lint.mjs).",
  );
  process.exit(1);
}
console.log("✔ The contract's marks");

console.log("\n▶ The map of the code against the kits' modules (scripts/concepts-lint.mjs)");
const conceptMap = readConceptMap(join(specDir, ".."));
const concepts = checkConcepts(join(specDir, ".."), conceptMap);
concepts.problems.push(...tableProblems(join(specDir, ".."), conceptMap));
if (concepts.problems.length > 0) {
  console.error(concepts.problems.map((problem) => `  ✖ ${problem}`).join("\n"));
  console.error(
    "\n✖ The map of the code (spec/concepts.yaml) and the kits' modules differ: one concept, one module " +
      "name, in every kit (spec/scripts/concepts-lint.mjs).",
  );
  process.exit(1);
}
console.log(`✔ The map of the code: ${concepts.concepts} concepts in ${concepts.kits} kits`);

step("Spectral with the OWASP ruleset, warnings included", bin("spectral"), [
  "lint",
  "dist/openapi.yaml",
  "--fail-severity=warn",
]);

console.log("\n▶ Breaking changes against the last release (optic)");
const outcome = await checkBreakingChanges({ specDir });
if (!outcome.ok) {
  console.error(`\n✖ ${outcome.message}`);
  process.exit(1);
}
console.log(`✔ ${outcome.message}`);
