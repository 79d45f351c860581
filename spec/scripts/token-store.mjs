// Checks spec/token-store: every schema compiles under Ajv's strict mode (JSON Schema 2020-12), and
// the test vectors (vectors/sessions.json) have the shape of vectors/sessions.schema.json, so that a
// kit reading them meets no surprise. That the vectors' values follow the README's rules is the
// spec's test (test/token-store-vectors.test.ts).
//
// `checkTokenStore({ specDir })` returns the problems as sentences, [] when there is none.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";

/** The vectors files and the schema each must satisfy, relative to spec/token-store. */
export const VECTORS = [{ data: "vectors/sessions.json", schema: "vectors/sessions.schema.json" }];

/** Reads a JSON file, or returns the problem. */
function readJson(path) {
  try {
    return { value: JSON.parse(readFileSync(path, "utf8")) };
  } catch (error) {
    return { problem: `${path}: ${error instanceof SyntaxError ? "not valid JSON" : error.message}` };
  }
}

/** The problems of spec/token-store under `specDir`: schemas that do not compile, vectors that do not fit their schema. */
export function checkTokenStore({ specDir }) {
  const dir = join(specDir, "token-store");
  const problems = [];
  const ajv = new Ajv2020.default({ strict: true, allErrors: true });
  const schemaFiles = [
    ...readdirSync(dir).filter((name) => name.endsWith(".schema.json")),
    ...VECTORS.map((entry) => entry.schema),
  ];
  const compiled = new Map();
  for (const file of schemaFiles) {
    const read = readJson(join(dir, file));
    if (read.problem) {
      problems.push(read.problem);
      continue;
    }
    try {
      compiled.set(file, ajv.compile(read.value));
    } catch (error) {
      problems.push(`token-store/${file} does not compile: ${error.message}`);
    }
  }
  for (const { data, schema } of VECTORS) {
    const read = readJson(join(dir, data));
    if (read.problem) {
      problems.push(read.problem);
      continue;
    }
    const validate = compiled.get(schema);
    if (validate && !validate(read.value)) {
      for (const error of validate.errors ?? [])
        problems.push(`token-store/${data}${error.instancePath || " (root)"} ${error.message} (${error.schemaPath})`);
    }
  }
  return problems;
}
