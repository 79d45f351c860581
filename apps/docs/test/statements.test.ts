// The guides held to the contract. A sentence that says what the service does must rest on the
// service description (it names the section, and the section says it) or carry a mark that it is
// assumed. The sentences are listed here explicitly, each with its source; a listed sentence that
// loses its reference or its mark fails, and so does a sentence of the guides that states one of a
// small set of behaviours (the PATTERNS below: answered with a status, the tenant rotates, revokes,
// refuses, single use, discovery, ...) without being listed.
//
// The guides are the contract's (info.description, tag descriptions, as the reference shows them)
// and the READMEs that describe the service to a user: the repository's and the token manager's,
// the client's, the Redis store's and the PostgreSQL store's. The contract's other descriptions (operations, parameters,
// schemas, responses, examples) are held the same way, each by its JSON pointer. The description is read from the
// repository's copy, spec/service-description.md (a fresh clone has nothing beside it), which is held word for word
// to ../shared/service-description.md wherever that one is at hand.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { contract, resolvePointer } from "./support/contract.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const descriptionPath = join(repoRoot, "spec", "service-description.md");
const sharedDescriptionPath = join(repoRoot, "..", "shared", "service-description.md");

const squash = (text: string): string => text.replace(/\s+/g, " ").trim();

/** The units a reader takes as one statement: a sentence, a table row, a list item, a code comment. */
function statementsOf(markdown: string): string[] {
  const units: string[] = [];
  for (const [, body] of markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```$/gm)) {
    for (const [comment] of body!.matchAll(/(?:^[ \t]*\/\/.*\n?)+/gm))
      units.push(squash(comment.replace(/^[ \t]*\/\/ ?/gm, "")));
  }
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, "");
  for (const block of prose.split(/\n\s*\n|\n(?=\s*(?:\||- |\d+\. ))/)) {
    const text = squash(block);
    if (text === "") continue;
    if (text.startsWith("|")) units.push(text);
    else units.push(...text.split(/(?<=[.!?])\s+(?=[A-Z`"(])/));
  }
  return units;
}

const readme = (path: string): [string, string] => [path, readFileSync(join(repoRoot, path), "utf8")];
const GUIDES: [string, string][] = [
  ["guides", contract.info.description],
  ...contract.tags.map((tag): [string, string] => [`tag ${tag.name}`, tag.description]),
  readme("README.md"),
  readme("packages/token-manager/README.md"),
  readme("packages/client/README.md"),
  readme("packages/token-store-redis/README.md"),
  readme("packages/token-store-postgres/README.md"),
];

/** Behaviours of the service a guide may state; each sentence stating one must be listed below. */
const PATTERNS: [string, RegExp][] = [
  ["answered with a status", /\banswered (with )?`?\d{3}/],
  [
    "the tenant or service does something",
    /\bthe (tenant|service|server) (would |may |then )?(rotate|revoke|answer|refuse|send|accept|publish|reject|ignore)s?\b/i,
  ],
  ["a refresh rotates", /\brotates the refresh token|\brefresh rotates\b/i],
  ["single use", /single[- ]use/i],
  ["a discovery document", /discovery document/i],
  ["revokes the session or family", /\brevokes? the (whole )?(session|(token )?family)/i],
  ["only these scope names", /only (these|the 37) names/i],
  ["the only stateful things", /only stateful things/i],
  // A refusal the kit makes names its error code or class (`INVALID_OPTIONS`, `PathOutsideApiError`).
  ["is refused", /\b(is|are) refused\b(?![^.]*`([A-Z][A-Z_]{3,}|[A-Z]\w*Error)`)/],
  ["a bearer challenge", /WWW-Authenticate: Bearer/],
];

/** The words that mark a statement as the contract's or the kit's assumption. */
const MARK =
  /\bassum|not shown|not stated by the description|description shows no|contract's (reading|choice)|under strict rotation/i;

/** Every `description` of the contract outside the guides, by the JSON pointer of its object. */
function descriptions(node: unknown = contract, at = "#", found: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) node.forEach((item, i) => descriptions(item, `${at}/${i}`, found));
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "description" && typeof value === "string") {
        if (at !== "#/info" && !at.startsWith("#/tags")) found.push([at, value]);
      } else descriptions(value, `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`, found);
    }
  }
  return found;
}

type Source =
  | { description: string; quote: string } // "§5.9": the section (or numbered item) that says it, and its words there
  | { mark: true } // assumed, and the sentence says so
  | { kit: string } // a statement of what the kit (not the service) does, and why it is listed
  | { sandbox: true } // a statement of what the sandbox does, and the sentence names it
  | { assumption: true }; // (a contract description) the object it describes carries the x-assumption the reference shows beside it

/** The statements of the guides about what the service does, each found by a fragment of it. */
const STATEMENTS: { where: string; fragment: string; source: Source }[] = [
  { where: "guides", fragment: "The description shows no discovery document", source: { mark: true } },
  {
    where: "guides",
    fragment: "Tokens are the only stateful things the service description shows",
    source: { description: "§3", quote: "Tokens are the only stateful things shown." },
  },
  {
    where: "guides",
    fragment: "Assumed by this contract, not stated by the description: an expired or revoked access token",
    source: { mark: true },
  },
  {
    where: "guides",
    fragment: "A token lacking the scope a route requires is answered with `403 Forbidden`",
    source: {
      description: "§5.9",
      quote: "A token lacking the scope a route requires is answered with 403 Forbidden.",
    },
  },
  { where: "guides", fragment: "carry only these names, space-separated", source: { mark: true } },
  {
    where: "guides",
    fragment: '| the same | the challenge `WWW-Authenticate: Bearer error="insufficient_scope"',
    source: { mark: true },
  },
  { where: "guides", fragment: "| the access token is expired, revoked or malformed |", source: { mark: true } },
  { where: "guides", fragment: "a general OAuth library is refused", source: { mark: true } },
  {
    where: "guides",
    fragment: "The program below signs in, refreshes (the tenant may rotate the refresh token",
    source: { description: "§4", quote: "The response may rotate the refresh token." },
  },
  { where: "guides", fragment: "**`scope` optional, the 37 names only**", source: { mark: true } },
  { where: "guides", fragment: "**Single-use code**", source: { mark: true } },
  { where: "guides", fragment: "**Request and response** (`#/paths/~1oauth~1revoke/post`)", source: { mark: true } },
  {
    where: "guides",
    fragment: "That is what the sandbox does by default (`--rotation-grace 0`)",
    source: { sandbox: true },
  },
  { where: "tag OAuth", fragment: "| `GET /oauth/authorize` | nothing yet", source: { mark: true } },
  { where: "tag Auth", fragment: "An expired, revoked or malformed token is answered `401`", source: { mark: true } },
  {
    where: "tag Auth",
    fragment: "A token without the route's scope is answered `403` (service description §5.9)",
    source: {
      description: "§5.9",
      quote: "A token lacking the scope a route requires is answered with 403 Forbidden.",
    },
  },
  { where: "README.md", fragment: "so a rotated refresh token is never presented twice", source: { mark: true } },
  {
    where: "packages/token-manager/README.md",
    fragment: "| `completeAuthorization(callbackUrl: string \\| URL)",
    source: { kit: "what the token manager refuses, before any request" },
  },
  { where: "packages/token-manager/README.md", fragment: "| `TRANSIENT` | `TransientError` |", source: { mark: true } },
  {
    where: "packages/token-manager/README.md",
    fragment: "The form posts to `POST /__sandbox/consent`",
    source: { sandbox: true },
  },
  {
    where: "packages/token-manager/README.md",
    fragment: "A process killed after the tenant rotated the refresh token",
    source: { mark: true },
  },
  {
    where: "packages/token-manager/README.md",
    fragment: "**0, strict (the default, and what the kit is built for):**",
    source: { kit: "the sandbox's --rotation-grace setting, under which the kit is described" },
  },
  {
    where: "packages/client/README.md",
    fragment: "What is returned and what is thrown, in one table (which statuses the tenant sends",
    source: { mark: true },
  },
  {
    where: "packages/client/README.md",
    fragment: "`retryMiddleware({ retries,",
    source: { kit: "which answers the client retries" },
  },
  {
    where: "packages/token-store-redis/README.md",
    fragment: "The tenant may rotate refresh tokens (service description §4)",
    source: { description: "§4", quote: "The response may rotate the refresh token." },
  },
  {
    where: "packages/token-store-redis/README.md",
    fragment: "Scripts run by SHA-1",
    source: { kit: "the Redis server's answer, not the tenant's" },
  },
  {
    where: "packages/token-store-redis/README.md",
    fragment: "After the tenant rotated the token but before the new one was stored",
    source: { mark: true },
  },
  {
    where: "packages/token-store-redis/README.md",
    fragment: "Whichever of the two reaches the tenant second presents a rotated-away token",
    source: { mark: true },
  },
  {
    where: "packages/token-store-redis/README.md",
    fragment: "then the sandbox tenant answers with a rotated refresh token",
    source: { sandbox: true },
  },
  {
    where: "packages/token-store-postgres/README.md",
    fragment: "The tenant may rotate refresh tokens (service description §4)",
    source: { description: "§4", quote: "The response may rotate the refresh token." },
  },
  {
    where: "#/paths/~1oauth~1token/post/responses/200",
    fragment: "A refresh answers with `RefreshTokenResponse`, whose `refresh_token` the contract makes optional",
    source: { description: "§4", quote: "The response may rotate the refresh token." },
  },
  {
    where: "#/paths/~1oauth~1revoke/post",
    fragment: "After it, API calls with that token are answered 401",
    source: { mark: true },
  },
  {
    where: "#/components/securitySchemes/tenantOAuth",
    fragment: "A token lacking the scope a route requires is answered with `403 Forbidden`",
    source: {
      description: "§5.9",
      quote: "A token lacking the scope a route requires is answered with 403 Forbidden.",
    },
  },
  {
    where: "#/components/parameters/Scope",
    fragment: "The contract admits only the 37 names",
    source: { assumption: true },
  },
  {
    where: "#/components/schemas/AuthorizationCodeGrantRequest/properties/code",
    fragment: "Single use.",
    source: { assumption: true },
  },
  {
    where: "#/components/schemas/RefreshTokenResponse",
    fragment: "A new `refresh_token` is present when the server rotates it",
    source: { assumption: true },
  },
  {
    where: "#/components/examples/UnsupportedTokenType",
    fragment: "Which token types the service revokes is not shown",
    source: { mark: true },
  },
];

/** The text of `§N` (a `## N.` section) or `§N.M` (the M-th numbered item of section N) of the description. */
function descriptionSection(description: string, reference: string): string | undefined {
  const [, major, minor] = /^§(\d+)(?:\.(\d+))?$/.exec(reference) ?? [];
  const sections = description.split(/^## /m);
  const section = sections.find((part) => part.startsWith(`${major}. `));
  if (section === undefined || minor === undefined) return section;
  return new RegExp(`^${minor}\\. (.*)$`, "m").exec(section)?.[1];
}

const guideUnits = GUIDES.map(([where, markdown]) => ({ where, statements: statementsOf(markdown) }));
const descriptionUnits = descriptions().map(([where, markdown]) => ({ where, statements: statementsOf(markdown) }));
const units = [...guideUnits, ...descriptionUnits];
const find = (where: string, fragment: string) =>
  units.find((u) => u.where === where)?.statements.filter((s) => s.includes(squash(fragment))) ?? [];

describe("the guides' statements about the service", () => {
  it("read the service description (spec/service-description.md)", () => {
    expect(existsSync(descriptionPath), descriptionPath).toBe(true);
  });

  it.skipIf(!existsSync(sharedDescriptionPath))("hold a copy that is the shared description word for word", () => {
    expect(readFileSync(descriptionPath, "utf8")).toBe(readFileSync(sharedDescriptionPath, "utf8"));
  });

  it.each(STATEMENTS.map((s) => [s.fragment.slice(0, 70), s] as const))(
    "%s…: is there, once, with its source",
    (_name, { where, fragment, source }) => {
      const found = find(where, fragment);
      expect(found, `${where}: "${fragment}"`).toHaveLength(1);
      const statement = found[0]!;
      if ("description" in source) {
        const reference = source.description.replace("§", "");
        expect(statement, "names the section it rests on").toMatch(
          new RegExp(
            `(description|its section|section) §?${reference.replace(".", "\\.")}\\b|description §[\\d.]+, §${reference.replace(".", "\\.")}\\b`,
          ),
        );
        const section = descriptionSection(readFileSync(descriptionPath, "utf8"), source.description);
        expect(section, `the description has ${source.description}`).toBeDefined();
        expect(squash(section!.replace(/`/g, "")), `${source.description} says it`).toContain(source.quote);
      } else if ("mark" in source) {
        expect(statement, "carries its mark").toMatch(MARK);
      } else if ("sandbox" in source) {
        expect(statement).toMatch(/sandbox/);
      } else if ("assumption" in source) {
        const node = resolvePointer(where) as { "x-assumption"?: unknown };
        expect(typeof node["x-assumption"], `${where} carries an x-assumption`).toBe("string");
      } else {
        expect(source.kit.length).toBeGreaterThan(0);
      }
    },
  );

  const unlisted = ({ where, statements }: { where: string; statements: string[] }) => {
    const listed = STATEMENTS.filter((s) => s.where === where).map((s) => squash(s.fragment));
    return statements
      .filter((statement) => PATTERNS.some(([, pattern]) => pattern.test(statement)))
      .filter((statement) => !listed.some((fragment) => statement.includes(fragment)))
      .map((statement) => `${where}: ${statement}`);
  };

  it.each(guideUnits.map((u) => [u.where, u] as const))(
    "in %s, every statement of a listed behaviour is listed",
    (_where, unit) => {
      expect(unlisted(unit)).toEqual([]);
    },
  );

  it("in the contract's other descriptions, every statement of a listed behaviour is listed", () => {
    expect(descriptionUnits.length).toBeGreaterThan(50);
    expect(descriptionUnits.flatMap(unlisted)).toEqual([]);
  });
});

describe("the pattern check", () => {
  it("sees a new unmarked statement of a listed behaviour, and not a refusal of the kit that names its error", () => {
    const statements = statementsOf(
      "Intro.\n\nAfter a revocation the tenant answers every call with 401. A form body is refused. A bad option is refused with `INVALID_OPTIONS`.",
    );
    const flagged = statements.filter((statement) => PATTERNS.some(([, pattern]) => pattern.test(statement)));
    expect(flagged).toEqual(["After a revocation the tenant answers every call with 401.", "A form body is refused."]);
  });

  it("finds §5.9 as the ninth numbered item of section 5 of the description", () => {
    const section = descriptionSection(readFileSync(descriptionPath, "utf8"), "§5.9");
    expect(section).toMatch(/^A token lacking the scope a route requires/);
  });
});
