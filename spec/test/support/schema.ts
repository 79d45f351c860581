// Validates values against the bundle's schemas with Ajv (JSON Schema 2020-12, as OpenAPI 3.1).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);
const contract = JSON.parse(readFileSync(require.resolve("@tenant-integration/openapi/openapi.json"), "utf8"));
// OpenAPI keywords (discriminator, example, x-*) are not JSON Schema: strict mode would reject them.
const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: "contract", components: contract.components }, "contract");

/** Errors of `value` against the schema at `pointer` (e.g. `#/components/schemas/User`), or [] when valid. */
export function schemaErrors(pointer: string, value: unknown): string[] {
  const validate = ajv.compile({ $ref: `contract${pointer}` });
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message}`);
}

export { contract };
