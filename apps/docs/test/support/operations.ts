// What each operation's section of the reference must show, read from the bundled contract.
import { contract, resolvePointer } from "./contract.js";

export interface OperationDetails {
  method: string;
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Every x-assumption reachable from the operation, following $refs, with where it was found. */
  assumptions: { pointer: string; text: string }[];
  parameters: string[];
  requestMediaTypes: string[];
  /** Each response: its status, the start of its description, and the label its first example shows (if any). */
  responses: { status: string; descriptionStart: string; exampleLabel: string | null }[];
}

type Node = Record<string, unknown>;

const resolve = (node: unknown): unknown => {
  let current = node;
  while (current !== null && typeof current === "object" && typeof (current as Node).$ref === "string")
    current = resolvePointer((current as Node).$ref as string);
  return current;
};

/** The first sentence of a markdown text as it reads rendered: no backticks, no emphasis, one line. */
export const firstSentence = (markdown: string): string =>
  markdown
    .replace(/[`*]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .split(/(?<=\.)\s/)[0]!
    .replace(/\s*\(.*$/, "")
    .slice(0, 80);

/** Every x-assumption under `node`, following local $refs once each. */
function assumptionsUnder(
  node: unknown,
  at: string,
  seen: Set<unknown>,
  found: { pointer: string; text: string }[],
): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => assumptionsUnder(item, `${at}/${i}`, seen, found));
    return;
  }
  if (node === null || typeof node !== "object") return;
  const ref = (node as Node).$ref;
  if (typeof ref === "string") {
    if (seen.has(ref)) return;
    seen.add(ref);
    assumptionsUnder(resolvePointer(ref), ref, seen, found);
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "x-assumption" && typeof value === "string") {
      if (!found.some((f) => f.text === value)) found.push({ pointer: at, text: value });
    } else if (key !== "x-codeSamples" && key !== "discriminator") assumptionsUnder(value, `${at}/${key}`, seen, found);
  }
}

/** The details of every operation, in the contract's order. */
export function operationDetails(): OperationDetails[] {
  return Object.entries(contract.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Node>).map(([method, op]) => {
      const assumptions: { pointer: string; text: string }[] = [];
      const pointer = `#/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}/${method}`;
      assumptionsUnder(op, pointer, new Set(), assumptions);
      const requestBody = resolve(op.requestBody) as { content?: Record<string, unknown> } | undefined;
      const responses = Object.entries((op.responses ?? {}) as Record<string, unknown>).map(([status, raw]) => {
        const response = resolve(raw) as {
          description: string;
          content?: Record<string, { examples?: Record<string, unknown> }>;
        };
        const [media] = Object.values(response.content ?? {});
        const examples = Object.values(media?.examples ?? {}).map(
          (e) => resolve(e) as { summary?: string; description?: string },
        );
        const [first] = examples;
        // Redoc shows an example's description beside it, and its summary only in the menu of several.
        // An illustrative example must show that it is one, whatever else it shows.
        const exampleLabel = first?.description
          ? firstSentence(first.description)
          : (examples.length > 1 || /^Illustrative/.test(first?.summary ?? "")) && first?.summary
            ? first.summary
            : null;
        return { status, descriptionStart: firstSentence(response.description), exampleLabel };
      });
      return {
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        summary: op.summary as string,
        tag: (op.tags as string[])[0]!,
        assumptions,
        parameters: ((op.parameters ?? []) as unknown[]).map((p) => (resolve(p) as { name: string }).name),
        requestMediaTypes: Object.keys(requestBody?.content ?? {}),
        responses,
      };
    }),
  );
}
