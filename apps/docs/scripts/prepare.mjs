// Prepares a copy of the bundled contract for the Redoc reference; the contract itself is not
// changed. Two things a reader should see where they read:
//
// - Every `x-assumption` is appended to the `description` of the object that carries it, after
//   the words "Assumption (not in the service description):", so an operation, parameter, field,
//   header or response shows what the contract assumed right where Redoc describes it. (Redoc's
//   `showExtensions` would show some of them raw, and none on responses or headers.) A body
//   schema's assumption goes to its request body or response, and a parameter schema's to its
//   parameter, where Redoc shows descriptions.
// - The guides' fenced `sequence` and `states` blocks become inline SVG diagrams.
// - A server's description loses its markdown: Redoc's Servers box shows it as plain text, where
//   `/api/v1` would keep its backticks.
import { ASSUMPTION_LABEL, appendAssumptions, assumptionText } from "@tenant-integration/openapi/marks.mjs";
import { renderDiagrams } from "./diagrams.mjs";

// The label and the rule are the contract's (spec/marks.mjs), shared with the generated types.
export { ASSUMPTION_LABEL, assumptionText };

function markAssumptions(node) {
  // Redoc shows a server's description as plain text, everything else as markdown.
  appendAssumptions(node, (assumption, object) =>
    "url" in object ? `${ASSUMPTION_LABEL} ${assumption.trim()}` : assumptionText(assumption),
  );
}

/** The node a local `$ref` names, followed until it is no reference. */
function resolve(root, node) {
  let current = node;
  while (current && typeof current.$ref === "string") {
    current = current.$ref
      .replace(/^#\//, "")
      .split("/")
      .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce((at, key) => at?.[key], root);
  }
  return current;
}

/**
 * Redoc does not show the description of a request or response body's own schema, nor of the
 * branches of its one-of or any-of: their assumptions are written into the description of the
 * request body or response instead, after the schema's title.
 */
function markBodyAssumptions(root, target) {
  const schemas = new Set();
  for (const media of Object.values(target.content ?? {})) {
    const schema = resolve(root, media.schema);
    if (!schema) continue;
    for (const member of [schema, ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) schemas.add(resolve(root, member));
  }
  const notes = [...schemas]
    .filter((schema) => typeof schema?.["x-assumption"] === "string")
    .map((schema) => `*${schema.title ?? "Body"}.* ${assumptionText(schema["x-assumption"])}`);
  if (notes.length === 0) return;
  const description = typeof target.description === "string" ? target.description.trimEnd() : "";
  target.description = [description, ...notes].filter((part) => part !== "").join("\n\n");
}

/**
 * Redoc shows a parameter's description, not its schema's: an assumption of the schema (the scope
 * list's form, say) is written into the parameter's description, after the schema's title, so that
 * the operation shows it where the parameter is described.
 */
function markParameterSchemaAssumptions(root, parameter) {
  const schema = resolve(root, parameter.schema);
  if (typeof schema?.["x-assumption"] !== "string") return;
  const note = `*${schema.title ?? "Schema"}.* ${assumptionText(schema["x-assumption"])}`;
  const description = typeof parameter.description === "string" ? parameter.description.trimEnd() : "";
  parameter.description = [description, note].filter((part) => part !== "").join("\n\n");
}

/** Markdown as plain text, for the places Redoc does not render it: code spans and emphasis unwrapped. */
export const plainText = (markdown) => markdown.replace(/`([^`]*)`/g, "$1").replace(/\*\*([^*]*)\*\*/g, "$1");

/** Every server object of the contract: the root's, each path's and each operation's. */
function servers(contract) {
  const items = Object.values(contract.paths ?? {});
  return [
    contract.servers,
    ...items.map((item) => item?.servers),
    ...items.flatMap((item) => Object.values(item ?? {}).map((op) => op?.servers)),
  ]
    .filter(Array.isArray)
    .flat();
}

/** A copy of `contract` with its assumptions written into descriptions and its diagrams drawn. */
export function prepareForReaders(contract) {
  const copy = structuredClone(contract);
  // Bodies first, from the x-assumption texts as the contract has them.
  const targets = new Set();
  for (const item of Object.values(copy.paths ?? {})) {
    for (const operation of Object.values(item)) {
      if (operation?.requestBody) targets.add(resolve(copy, operation.requestBody));
      for (const response of Object.values(operation?.responses ?? {})) targets.add(resolve(copy, response));
    }
  }
  for (const target of targets) markBodyAssumptions(copy, target);
  const parameters = new Set(
    Object.values(copy.paths ?? {}).flatMap((item) =>
      Object.values(item).flatMap((operation) => (operation?.parameters ?? []).map((p) => resolve(copy, p))),
    ),
  );
  for (const parameter of parameters) markParameterSchemaAssumptions(copy, parameter);
  markAssumptions(copy);
  for (const server of servers(copy))
    if (typeof server.description === "string") server.description = plainText(server.description);
  copy.info.description = renderDiagrams(copy.info.description);
  return copy;
}
