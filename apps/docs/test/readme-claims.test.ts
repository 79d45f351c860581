// Issue 27: the READMEs stated as fact what the contract only assumes. This holds every README a user
// reads (the repository's and each package's, the Python SDK's included) to four rules that failed
// before the fix, each a regression guard named after what it guards:
// - no code sample indexes a field of the user record (its fields are not shown: a tenant without
//   `name` raised KeyError in the first sample a user runs); Python reads them with `.get()`, and a
//   TypeScript `TenantUser` augmentation declares them optional;
// - no route under /api/v1 but /api/v1/auth/user is shown as if it existed (`/api/v1/tickets`);
// - no sentence says RFC 6585 §4 makes a 429 "not processed": it does not;
// - a README that shows a refresh after the access token expired (16 minutes later) says that the
//   description has the refresh made before expiry, and that it is assumed.
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const readmes = [
  "README.md",
  ...readdirSync(join(repoRoot, "packages"))
    .map((name) => `packages/${name}/README.md`)
    .filter((path) => existsSync(join(repoRoot, path))),
].map((path) => ({ path, text: readFileSync(join(repoRoot, path), "utf8") }));

const squash = (text: string): string => text.replace(/\s+/g, " ").trim();
const codeBlocks = (markdown: string): string[] =>
  [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```$/gm)].map(([, body]) => body!);
const prose = (markdown: string): string => markdown.replace(/^```[\s\S]*?^```$/gm, "");
const sentences = (markdown: string): string[] => squash(prose(markdown)).split(/(?<=[.!?|])\s+(?=[A-Z`"(|*])/);

/** A sample reading a user field in a way that fails when the tenant leaves the field out. */
export function userFieldReads(sample: string): string[] {
  const found: string[] = [];
  // Python: user["name"], users[0]['name'], get_user()["name"]
  for (const [match] of sample.matchAll(/\b(?:\w*user\w*(?:\[\d+\])?|get_user\(\))\s*\[\s*["'][^"']+["']\s*\]/gi))
    found.push(match);
  // TypeScript: user.name.toUpperCase(), user!.name, data.name on the user route's data
  for (const [match] of sample.matchAll(/\buser!?\.(?!get\b)\w+[.!(]/g)) found.push(match);
  // A TenantUser augmentation declaring a field as always present.
  for (const [, body] of sample.matchAll(/interface TenantUser \{([^}]*)\}/g)) {
    for (const [match] of body!.matchAll(/^\s*[\w"']+\s*:\s*[^;]+;/gm)) found.push(squash(match));
  }
  return found;
}

/** Routes under /api/v1 other than the one the description shows; `<route>` placeholders are fine. */
export function inventedRoutes(markdown: string): string[] {
  return [...markdown.matchAll(/\/api\/v1\/([a-z][\w{}-]*(?:\/[\w{}-]+)*)/g)]
    .map(([, route]) => route!)
    .filter((route) => route !== "auth/user");
}

describe("the READMEs do not state assumptions as the service's behaviour", () => {
  it("reads the READMEs, the Python SDK's among them", () => {
    expect(readmes.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        "README.md",
        "packages/client/README.md",
        "packages/python/README.md",
        "packages/sandbox/README.md",
        "packages/token-manager/README.md",
      ]),
    );
  });

  it.each(readmes.map((r) => [r.path, r] as const))("%s: no sample indexes a user field", (_path, { text }) => {
    expect(codeBlocks(text).flatMap(userFieldReads)).toEqual([]);
  });

  it.each(readmes.map((r) => [r.path, r] as const))(
    "%s: no route under /api/v1 is shown but /api/v1/auth/user",
    (_path, { text }) => {
      expect(inventedRoutes(text)).toEqual([]);
    },
  );

  it.each(readmes.map((r) => [r.path, r] as const))(
    "%s: no sentence has RFC 6585 say a 429 was not processed",
    (_path, { text }) => {
      const claims = sentences(text).filter(
        (s) =>
          /RFC 6585/.test(s) && /not processed|did not handle|was never processed/.test(s) && !/does not say/.test(s),
      );
      expect(claims).toEqual([]);
    },
  );

  it.each(readmes.map((r) => [r.path, r] as const))(
    "%s: a refresh 16 minutes later is marked as made after expiry",
    (_path, { text }) => {
      if (!/16 minutes|16 \* 60/.test(text)) return;
      expect(
        squash(text).includes("before the access token expires"),
        "says the description has the refresh made before expiry",
      ).toBe(true);
      const marked = sentences(text).filter(
        (s) => /before the access token expires/.test(s) && /assum|not shown|does not show/.test(s),
      );
      expect(marked.length, "a sentence says the refresh after expiry is assumed").toBeGreaterThan(0);
    },
  );

  it("no README says the sandbox behaves like the service", () => {
    for (const { path, text } of readmes) expect(squash(text), path).not.toMatch(/like the service\b/);
  });
});

describe("the checks themselves", () => {
  it("see the samples of issue 27 and pass their fixes", () => {
    expect(userFieldReads(`print(f"Signed in as {user['name']}")`)).toHaveLength(1);
    expect(userFieldReads(`print(users[0]["name"])`)).toHaveLength(1);
    expect(userFieldReads(`assert tenant.client.get_user()["name"] == "Ada"`)).toHaveLength(1);
    expect(userFieldReads(`if (user) console.log(user.name.toUpperCase());`)).toHaveLength(1);
    expect(userFieldReads(`interface TenantUser {\n    name: string;\n  }`)).toHaveLength(1);
    expect(userFieldReads(`print(user.get("name", "(no name)"))`)).toEqual([]);
    expect(
      userFieldReads(`console.log(user?.name ?? "(no name)");\ninterface TenantUser {\n  name?: string;\n}`),
    ).toEqual([]);
    expect(inventedRoutes('client.raw.GET("/api/v1/tickets", {})')).toEqual(["tickets"]);
    expect(inventedRoutes('client.raw.GET("/api/v1/<route>/{id}") and /api/v1/auth/user under `/api/v1/`')).toEqual([]);
  });
});
