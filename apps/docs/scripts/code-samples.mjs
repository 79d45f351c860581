// The code samples of the reference: every operation shows how the kit calls it, in TypeScript, in
// Python, in Go and in Java, and the raw HTTP request with curl, side by side (Redoc's `x-codeSamples`,
// in the language menu of the right-hand panel, beside "Payload", the request body of the example
// chosen). The samples are files, `samples/<operationId>.ts|.py|.go|.java|.sh`, so that tests compile and
// run them (apps/docs/test/code-samples.test.ts type-checks the TypeScript ones,
// test/curl-samples.test.ts runs the curl ones and the sign-in samples against a sandbox,
// test/go-samples.test.ts builds the Go ones against packages/go and runs the sign-in one;
// test/samples-run.test.ts compiles the Java ones against packages/java's jars and runs them all;
// packages/python/tests/test_docs_samples.py runs mypy --strict on the Python ones); nothing here
// writes code.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folder of the samples. */
export const samplesDir = fileURLToPath(new URL("../samples/", import.meta.url));

/** The languages every operation shows, in tab order: file extension, Redoc `lang` and tab label. */
export const SAMPLE_LANGUAGES = [
  { extension: "ts", lang: "TypeScript", label: "TypeScript" },
  { extension: "py", lang: "Python", label: "Python" },
  { extension: "go", lang: "Go", label: "Go" },
  { extension: "java", lang: "Java", label: "Java" },
  // Redoc highlights the `curl` language as shell.
  { extension: "sh", lang: "curl", label: "curl" },
];

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every operation of the contract as `{ operationId, operation }`, in the contract's order. */
function operations(contract) {
  return Object.values(contract.paths ?? {}).flatMap((item) =>
    METHODS.filter((method) => item?.[method]).map((method) => ({
      operationId: item[method].operationId,
      operation: item[method],
    })),
  );
}

/**
 * A copy of `contract` whose every operation has `x-codeSamples`: one entry per language of
 * {@link SAMPLE_LANGUAGES}, its source the file `<dir>/<operationId>.<extension>`.
 *
 * @throws Error naming every missing sample, and every sample file that names no operation.
 */
export function withCodeSamples(contract, dir = samplesDir) {
  const copy = structuredClone(contract);
  const problems = [];
  const known = new Set();
  for (const { operationId, operation } of operations(copy)) {
    known.add(operationId);
    operation["x-codeSamples"] = SAMPLE_LANGUAGES.flatMap(({ extension, lang, label }) => {
      const file = join(dir, `${operationId}.${extension}`);
      if (!existsSync(file)) {
        problems.push(`samples/${operationId}.${extension} is missing (every operation shows every language)`);
        return [];
      }
      return [{ lang, label, source: readFileSync(file, "utf8").trimEnd() }];
    });
  }
  const extensions = new Set(SAMPLE_LANGUAGES.map(({ extension }) => extension));
  for (const file of existsSync(dir) ? readdirSync(dir) : []) {
    const [name, extension] = [file.slice(0, file.lastIndexOf(".")), file.slice(file.lastIndexOf(".") + 1)];
    if (extensions.has(extension) && !known.has(name))
      problems.push(`samples/${file} names no operation of the contract`);
  }
  if (problems.length > 0) throw new Error(`Code samples of the reference:\n  ${problems.join("\n  ")}`);
  return copy;
}
