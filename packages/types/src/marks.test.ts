/**
 * Regression guard for issue 27: openapi-typescript copies `description` and drops `x-assumption`,
 * so the generated TSDoc presented what the contract only assumes (seconds, Bearer, the error codes,
 * the revoke fields) as fact. Every mark of the contract must reach the TSDoc a hover shows.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { ASSUMPTION_LABEL, assumptionText } from "@tenant-integration/openapi/marks.mjs";
import { describe, expect, it } from "vitest";

const contract: unknown = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve("@tenant-integration/openapi/openapi.json"), "utf8"),
);
const generated = readFileSync(new URL("./generated/openapi.ts", import.meta.url), "utf8");
const index = readFileSync(new URL("./index.ts", import.meta.url), "utf8");

const squash = (text: string): string => text.replace(/\s+/g, " ").trim();
/** The text of every TSDoc comment of `source`, without its `*` gutters, on one line each. */
const tsdoc = (source: string): string[] =>
  [...source.matchAll(/\/\*\*([\s\S]*?)\*\//g)].map(([, body]) => squash(body!.replace(/^\s*\* ?/gm, " ")));

/** Every `x-assumption` of the contract with the JSON pointer of the object carrying it. */
function marks(node: unknown, at = "#", found: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) node.forEach((item, i) => marks(item, `${at}/${i}`, found));
  else if (node !== null && typeof node === "object") {
    const record = node as Record<string, unknown>;
    if (typeof record["x-assumption"] === "string") found.push([at, record["x-assumption"]]);
    for (const [key, value] of Object.entries(record))
      marks(value, `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`, found);
  }
  return found;
}

// Servers are not types: their mark is for the docs site and the base URL's own checks.
const typed = marks(contract).filter(([at]) => !/^#(\/paths\/[^/]+(\/[a-z]+)?)?\/servers\//.test(at));
const comments = tsdoc(generated);

describe("the generated types carry the contract's marks", () => {
  it("finds the contract's marks (a test that sees none proves nothing)", () => {
    expect(typed.length).toBeGreaterThanOrEqual(30);
  });

  it.each(typed)("%s: its x-assumption is in the TSDoc, after the label", (_at, assumption) => {
    const expected = squash(assumptionText(assumption));
    expect(
      comments.some((comment) => comment.includes(expected)),
      expected,
    ).toBe(true);
  });

  it("marks seconds, Bearer, the OAuth error codes and the revoke fields as assumed where a hover shows them", () => {
    const commentOf = (name: string) => {
      const at = generated.indexOf(`        ${name}:`);
      const before = generated.slice(0, at);
      return squash(before.slice(before.lastIndexOf("/**")).replace(/^\s*\* ?/gm, " "));
    };
    for (const name of ["ExpiresIn", "TokenType", "OAuthError", "RevocationRequest"]) {
      expect(commentOf(name), name).toContain(ASSUMPTION_LABEL);
    }
    expect(commentOf("ExpiresIn")).toMatch(
      /seconds.*Assumption \(not in the service description\):\*\* The unit and form of expires_in are not shown/,
    );
  });
});

describe("the named aliases of index.ts", () => {
  const schemas = (contract as { components: { schemas: Record<string, Record<string, unknown>> } }).components.schemas;
  const aliases = [...index.matchAll(/\/\*\*([\s\S]*?)\*\/\nexport type (\w+) = Schemas\["(\w+)"\];/g)].map(
    ([, doc, alias, schema]) => ({
      doc: squash(doc!.replace(/^\s*\* ?/gm, " ")),
      alias: alias!,
      schema: schema!,
    }),
  );

  it("are all read by this test", () => {
    expect(aliases.map((a) => a.alias)).toEqual(
      expect.arrayContaining(["TokenResponse", "OAuthError", "RevocationRequest", "User"]),
    );
  });

  it.each(aliases.map((a) => [a.alias, a] as const))(
    "%s: says what is assumed when its schema (or a field's) is assumed",
    (_alias, { doc, schema }) => {
      const node = schemas[schema]!;
      const assumed =
        JSON.stringify(node).includes("x-assumption") || ["TokenResponse", "RefreshTokenResponse"].includes(schema);
      if (assumed) expect(doc).toContain(ASSUMPTION_LABEL.replace(":", ""));
      else expect(doc).toMatch(/not show|not shown/);
    },
  );
});
