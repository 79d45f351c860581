// The bundled contract, and the parts of its guides the tests check.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export interface Contract {
  info: { description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, { summary: string; operationId: string }>>;
  components: {
    securitySchemes: { tenantOAuth: { flows: { authorizationCode: { scopes: Record<string, string> } } } };
  };
}

export const contract = JSON.parse(
  readFileSync(require.resolve("@tenant-integration/openapi/openapi.json"), "utf8"),
) as Contract;

/** Every scope name of the security scheme. */
export const scopes = Object.keys(contract.components.securitySchemes.tenantOAuth.flows.authorizationCode.scopes);

/** Every operation: method, path and summary. */
export const operations = Object.entries(contract.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, summary: op.summary })),
);

const escape = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** The JSON pointer (`#/…`) of every object that carries an `x-assumption`, in document order. */
export function assumptionPointers(node: unknown = contract, at = "#"): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => assumptionPointers(item, `${at}/${i}`));
  if (node === null || typeof node !== "object") return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === "x-assumption" ? [at] : assumptionPointers(value, `${at}/${escape(key)}`),
  );
}

/** The node a JSON pointer (`#/…`) names, or undefined. */
export function resolvePointer(pointer: string, root: unknown = contract): unknown {
  return pointer
    .replace(/^#\/?/, "")
    .split("/")
    .filter((part) => part !== "")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>(
      (at, key) => (at !== null && typeof at === "object" ? (at as Record<string, unknown>)[key] : undefined),
      root,
    );
}

/** The markdown of the `## <title>` section of info.description, up to the next `## ` heading. */
export function section(title: string, markdown = contract.info.description): string {
  const lines = markdown.split("\n");
  const start = lines.findIndex((line) => line === `## ${title}`);
  if (start === -1) throw new Error(`info.description has no "## ${title}" section`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith("## "));
  return lines.slice(start + 1, end === -1 ? undefined : end).join("\n");
}

/** The fenced code blocks of a markdown text with the given language. */
export function codeBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp("^```" + language + "\\n([\\s\\S]*?)^```$", "gm"))].map(
    (match) => match[1] ?? "",
  );
}
