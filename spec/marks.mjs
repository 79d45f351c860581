// How the contract's assumptions reach a reader. Every object whose content the service
// description does not show carries `x-assumption: <what and why>`. Tools that copy `description`
// (Redoc, openapi-typescript, datamodel-code-generator) drop extensions, so whatever presents the
// contract to a user appends each assumption to the description of the object that carries it,
// after ASSUMPTION_LABEL: the docs site (apps/docs/scripts/prepare.mjs) and the generated
// TypeScript types (packages/types/scripts/generate.mjs) use this module; the Python generator
// (packages/python/scripts/generate.py) writes the same label, and its tests hold it to this one.

/** The words that introduce an assumption wherever a reader meets it. */
export const ASSUMPTION_LABEL = "Assumption (not in the service description):";

/** The markdown an x-assumption becomes in its object's description. */
export const assumptionText = (assumption) => `**${ASSUMPTION_LABEL}** ${assumption.trim()}`;

/**
 * Appends every `x-assumption` under `node` to the `description` of the object that carries it
 * (after a blank line, or as the whole description when there is none), in place. `format` turns
 * an assumption (and the object carrying it) into the appended text; the default is
 * {@link assumptionText}. The `x-assumption` itself is kept.
 */
export function appendAssumptions(node, format = (assumption) => assumptionText(assumption)) {
  if (Array.isArray(node)) for (const item of node) appendAssumptions(item, format);
  else if (node !== null && typeof node === "object") {
    if (typeof node["x-assumption"] === "string") {
      const description = typeof node.description === "string" ? node.description.trimEnd() : "";
      const text = format(node["x-assumption"], node);
      node.description = description === "" ? text : `${description}\n\n${text}`;
    }
    for (const value of Object.values(node)) appendAssumptions(value, format);
  }
  return node;
}
