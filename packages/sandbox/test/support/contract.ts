import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { BUNDLE_PATH } from "./prism.js";

type Json = Record<string, unknown>;

/** The bundled contract as JSON. */
export const contract = JSON.parse(readFileSync(BUNDLE_PATH, "utf8")) as Json & {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module object.
const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (instance: Ajv2020) => void;
addFormats(ajv);
ajv.addSchema({ ...contract, $id: "contract" });

const escape = (part: string): string => part.replaceAll("~", "~0").replaceAll("/", "~1");

/** Follows `$ref`s from `pointer`; returns the object and the JSON pointer where it really lives. */
function resolve(pointer: string): { node: Json; pointer: string } {
  let current = pointer;
  for (;;) {
    let node: unknown = contract;
    for (const part of current.split("/").slice(1)) {
      node = (node as Json)[part.replaceAll("~1", "/").replaceAll("~0", "~")];
    }
    const ref = (node as Json)["$ref"];
    if (typeof ref !== "string") return { node: node as Json, pointer: current };
    current = ref.replace(/^#/, "");
  }
}

const validators = new Map<string, ValidateFunction>();
function validatorAt(pointer: string): ValidateFunction {
  const cached = validators.get(pointer);
  if (cached !== undefined) return cached;
  const compiled: ValidateFunction = ajv.compile({ $ref: `contract#${pointer}` });
  validators.set(pointer, compiled);
  return compiled;
}

/** Validates `value` against the schema at `pointer` of the contract. */
export function schemaProblems(pointer: string, value: unknown): string[] {
  const validate = validatorAt(pointer);
  return validate(value) ? [] : [ajv.errorsText(validate.errors)];
}

/**
 * The JSON pointer (`/components/schemas/...`) of the token response schema the contract names for
 * a grant type in `x-response-schema-by-grant-type`: OpenAPI cannot tie a response schema to a
 * request field, so the 200 schema admits both grants' shapes and this mapping says which applies.
 */
export function schemaForGrant(grantType: "authorization_code" | "refresh_token"): string {
  const ok = resolve(`/paths/${escape("/oauth/token")}/post/responses/200`).node;
  const byGrant = ok["x-response-schema-by-grant-type"] as Record<string, string> | undefined;
  const ref = byGrant?.[grantType];
  if (ref === undefined) throw new Error(`the contract names no response schema for grant_type ${grantType}`);
  return ref.replace(/^#/, "");
}

/**
 * Checks a response against the contract: its status is documented for the operation, required
 * headers are present and valid, the content type is documented, and a JSON body matches the
 * documented schema. Returns the problems found, empty when the response is valid.
 */
export async function contractProblems(path: string, method: string, response: Response): Promise<string[]> {
  const operationPointer = `/paths/${escape(path)}/${method.toLowerCase()}`;
  if (contract.paths[path]?.[method.toLowerCase()] === undefined) return [`${method} ${path} is not in the contract`];
  const status = String(response.status);
  if (contract.paths[path]?.[method.toLowerCase()]?.responses[status] === undefined) {
    return [`status ${status} is not documented for ${method} ${path}`];
  }
  const { node: documented, pointer } = resolve(`${operationPointer}/responses/${status}`);
  const problems: string[] = [];
  for (const name of Object.keys((documented["headers"] ?? {}) as Json)) {
    const header = resolve(`${pointer}/headers/${escape(name)}`);
    const value = response.headers.get(name);
    if (header.node["required"] === true && value === null) problems.push(`missing header ${name}`);
    if (value !== null && header.node["schema"] !== undefined) {
      problems.push(...schemaProblems(`${header.pointer}/schema`, value).map((text) => `header ${name}: ${text}`));
    }
  }
  const content = documented["content"] as Json | undefined;
  if (content === undefined) return problems;
  const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
  if (!(mediaType in content)) return [...problems, `content type "${mediaType}" is not documented for ${status}`];
  const text = await response.clone().text();
  if (mediaType === "application/json") {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return [...problems, "the body is not JSON"];
    }
    problems.push(...schemaProblems(`${pointer}/content/${escape(mediaType)}/schema`, body).map((t) => `body: ${t}`));
  }
  return problems;
}
