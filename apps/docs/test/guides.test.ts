// The guides live in the contract's descriptions (info.description, tag descriptions). These tests
// keep them in step with the contract: a new x-assumption, scope or package without its entry fails.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { parseSequence, parseStates } from "../scripts/diagrams.mjs";
import { assumptionPointers, codeBlocks, contract, resolvePointer, scopes, section } from "./support/contract.js";
import { typecheckSnippet } from "./support/typecheck.js";

/** The sources of the fenced diagram blocks (```` ```states <title> ````) of a guide section. */
const diagramSources = (markdown: string, kind: "sequence" | "states"): string[] =>
  [...markdown.matchAll(new RegExp("^```" + kind + "[^\\n]*\\n([\\s\\S]*?)^```$", "gm"))].map(
    (match) => match[1] ?? "",
  );

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const REPOSITORY = "https://github.com/tenant-integration/sdk";

describe("What the service description leaves open", () => {
  const open = section("What the service description leaves open");
  const listed = [...open.matchAll(/^- \*\*.+?\*\* \(`(#\/[^`]+)`\): \S/gm)].map((match) => match[1]);

  it("finds the assumptions of the contract to check against", () => {
    expect(assumptionPointers().length).toBeGreaterThanOrEqual(20);
  });

  it.each(assumptionPointers())("lists the x-assumption at %s", (pointer) => {
    expect(listed).toContain(pointer);
  });

  it("lists no location that no longer carries an x-assumption", () => {
    const stale = listed.filter((pointer) => {
      const node = resolvePointer(pointer as string);
      return node === null || typeof node !== "object" || !("x-assumption" in node);
    });
    expect(stale).toEqual([]);
  });

  it("lists each location once", () => {
    expect(new Set(listed).size).toBe(listed.length);
  });
});

describe("the scopes guide", () => {
  const table = section("Scopes")
    .split("\n")
    .filter((line) => /^\| [a-z]/.test(line) && !line.startsWith("| area"));
  const inTable = table.flatMap((row) => [...row.matchAll(/`([^`]+)`/g)].map((match) => match[1]));

  it("names all 37 scopes of the security scheme, each once, in the scheme's order", () => {
    expect(scopes).toHaveLength(37);
    expect(inTable).toEqual(scopes);
  });

  it("groups them by area, one row per area with the area's own prefix", () => {
    expect(table).toHaveLength(23);
    for (const row of table) {
      const area = row.split("|")[1]!.trim().replace(/ /g, "-");
      for (const [, scope] of row.matchAll(/`([^`]+)`/g)) expect(scope, row).toMatch(new RegExp(`^${area}:`));
    }
  });
});

describe("the token lifecycle guide", () => {
  const lifecycle = section("Token lifecycle");

  it("draws every state of section 3 of the service description, as a state diagram and not as ASCII art", () => {
    const [source] = diagramSources(lifecycle, "states");
    expect(source).toBeDefined();
    const groups = parseStates(source!);
    expect(groups.map((g: { title: string }) => g.title)).toEqual([
      "access token (15 minutes)",
      "refresh token (30 days)",
    ]);
    const moves = groups.flatMap((g: { transitions: { to: string; text: string }[] }) =>
      g.transitions.map((t) => `${t.to}: ${t.text}`),
    );
    expect(moves).toEqual([
      "expired: 15 minutes pass",
      "revoked: POST /oauth/revoke",
      "expired: 30 days pass",
      "replaced by a new refresh token: refresh_token grant rotates it",
    ]);
    expect(lifecycle).not.toMatch(/```text/);
  });

  it("copies the description's table of section 3 as it stands: no assumed outcome in it", () => {
    const rows = lifecycle.split("\n").filter((line) => /^\| (access|refresh) \|/.test(line));
    expect(rows).toHaveLength(4);
    expect(rows.join("\n")).not.toMatch(/invalid_token|invalid_grant|401/);
    expect(rows[2]).toMatch(/\| none \|$/);
  });
});

describe("the sign-in guide", () => {
  it("draws the sequence between browser, integration and tenant, every step a message between them", () => {
    const [source] = diagramSources(section("Sign-in in five steps"), "sequence");
    const { participants, messages } = parseSequence(source!);
    expect(participants).toEqual(["Browser", "Integration", "Tenant"]);
    const text = messages.map((m: { text: string }) => m.text).join("\n");
    for (const step of ["GET /oauth/authorize", "POST /oauth/token", "code_verifier", "state", "Authorization: Bearer"])
      expect(text).toContain(step);
  });
});

describe("the errors guide", () => {
  const errors = section("Errors");

  it("marks every row the description does not state as assumed, with the RFC", () => {
    const rows = errors
      .split("\n")
      .filter((line) => line.startsWith("| ") && !line.startsWith("| when") && !line.startsWith("|---"));
    expect(rows.length).toBeGreaterThanOrEqual(7);
    for (const row of rows) expect(row, row).toMatch(/\| (description §7|assumed \(RFC \d+ §[^|]*) \|/);
  });

  it.each([
    ["a missing scope", "403 Forbidden"],
    ["a state mismatch", "STATE_MISMATCH"],
    ["a redirect_uri mismatch", "`redirect_uri` does not exactly match"],
    ["an invalid token", 'error="invalid_token"'],
  ])("covers %s", (_case, text) => {
    expect(errors).toContain(text);
  });

  it.each([
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "unsupported_token_type",
    "unsupported_response_type",
    "server_error",
    "temporarily_unavailable",
  ])("explains the OAuth error code %s", (code) => {
    expect(errors).toMatch(new RegExp(`^- \`${code}\`: \\S`, "m"));
  });
});

describe("the packages guide", () => {
  const packages = section("Packages");

  it.each([
    ["@tenant-integration/openapi", "spec"],
    ["@tenant-integration/types", "packages/types"],
    ["@tenant-integration/token-manager", "packages/token-manager"],
    ["@tenant-integration/client", "packages/client"],
    ["@tenant-integration/sandbox", "packages/sandbox"],
  ])("names %s and links its README in %s", (name, dir) => {
    const manifest = join(repoRoot, dir, "package.json");
    expect(existsSync(manifest), manifest).toBe(true);
    expect(JSON.parse(readFileSync(manifest, "utf8")).name).toBe(name);
    const row = packages.split("\n").find((line) => line.startsWith(`| \`${name}\` |`));
    expect(row, name).toBeDefined();
    expect(row).toContain(`(${REPOSITORY}/blob/main/${dir}/README.md)`);
  });
});

describe("the more-than-one-process guide", () => {
  const guide = section("More than one process");

  it("is a guide of its own, before the packages list", () => {
    const headings = [...contract.info.description.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    expect(headings.indexOf("More than one process")).toBeGreaterThan(0);
    expect(headings.indexOf("More than one process")).toBeLessThan(headings.indexOf("Packages"));
  });

  it.each([
    ["one process", "memoryStorage()"],
    ["the tabs of one browser", "webStorage(localStorage)"],
    ["processes on one machine", "fileStorage(path)"],
    ["several machines", "redisStorage(client)"],
  ])("says which storage covers %s: %s", (where, storage) => {
    const row = guide.split("\n").find((line) => line.startsWith(`| ${where}`));
    expect(row, where).toBeDefined();
    expect(row).toContain(`\`${storage}\``);
  });

  it("shows a storage with its own lock that compiles against the built token manager", () => {
    const [example] = codeBlocks(guide, "ts");
    expect(example).toContain("lock");
    expect(example).toContain(": TokenStorage");
    // The manager refuses a lock that processes share without the refresh intents beside it.
    expect(example).toMatch(/^\s+refreshIntents,/m);
    expect(typecheckSnippet("guides", "own-storage-and-lock", example!)).toBe("");
  });
});

describe("the guide of a server acting for many users", () => {
  const guide = section("A server acting for many users");

  it("is a guide of its own, after More than one process and before the packages list", () => {
    const headings = [...contract.info.description.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    const at = headings.indexOf("A server acting for many users");
    expect(at).toBeGreaterThan(headings.indexOf("More than one process"));
    expect(at).toBeLessThan(headings.indexOf("Packages"));
  });

  it.each([
    ["one account", ["`createTokenManager`", "`TokenManager`", "`tokenmanager.New`"]],
    ["many users", ["`createSessions`", "`Sessions`", "`AsyncSessions`", "`tokenmanager.NewSessions`"]],
  ])("says which object of each kit serves %s", (which, objects) => {
    const row = guide.split("\n").find((line) => line.startsWith("| ") && line.includes(which));
    expect(row, which).toBeDefined();
    for (const object of objects) expect(row).toContain(object);
  });

  it("has a sample in TypeScript, Python and Go", () => {
    for (const language of ["ts", "python", "go"]) expect(codeBlocks(guide, language), language).toHaveLength(1);
  });

  it("shows a server whose TypeScript compiles against the built token manager and client", () => {
    const [example] = codeBlocks(guide, "ts");
    expect(example).toContain("createSessions(");
    expect(example).toContain("signInHandlers(sessions");
    expect(example).toContain("sessionClient(sessions, user");
    expect(typecheckSnippet("guides", "many-users", example!)).toBe("");
  });

  it("a TypeScript sample that stops compiling is caught", () => {
    const [example] = codeBlocks(guide, "ts");
    const broken = example!.replace("sessions.isSignedIn(user)", "sessions.isSignedIn()");
    expect(broken).not.toBe(example);
    expect(typecheckSnippet("guides", "many-users-broken", broken)).toMatch(/error TS2554/);
  });

  it.each(["example-ts-server", "example-python-server", "example-go-server", "example-java-server"])(
    "links %s, an app of the repository run by the shared Chromium test of the example servers",
    (app) => {
      expect(guide).toContain(`(${REPOSITORY}/tree/main/apps/${app})`);
      expect(existsSync(join(repoRoot, "apps", app, "README.md")), app).toBe(true);
      const test = readFileSync(join(repoRoot, "apps", app, "test", "browser.test.ts"), "utf8");
      expect(test).toContain("describeServerExample(");
    },
  );

  it.each([
    ["what the cookie holds", /32 random bytes/],
    ["the cookie's attributes", /`HttpOnly`, `SameSite=Lax`/],
    ["what a session id may be", /1 to 128 characters from\s+`A-Z a-z 0-9 - \. _ ~ @ \+ = \|`/],
    ["the refusal of an id", /`INVALID_SESSION_ID`/],
    ["the refusal of another browser's callback", /`STATE_MISMATCH`\s+before any exchange/],
    ["what is never logged", /Never logged\*\*, at any level: tokens, codes, verifiers, states and bindings/],
  ])("states the security model: %s", (_what, text) => {
    expect(guide).toMatch(text);
  });

  // Every figure of "How each storage scales" is one a kit's README records: cited, never invented.
  it.each([
    ["17 to 20 s", "packages/token-manager/README.md"],
    ["706 of 2 000", "packages/token-manager/README.md"],
    ["1 090 of 2 000", "packages/python/README.md"],
    ["in 38 s", "packages/python/README.md"],
    ["in 23 s", "packages/python/README.md"],
    ["206 calls", "packages/go/README.md"],
    ["936", "packages/go/README.md"],
    ["1.2 KiB per cached session, 56 B per dropped one", "packages/go/README.md"],
    ["2 000 sessions", "packages/go/README.md"],
  ])("cites %s from %s", (figure, readme) => {
    const scales = guide.slice(guide.indexOf("### How each storage scales"));
    expect(scales.replace(/\s+/g, " ").includes(figure), `the guide says "${figure}"`).toBe(true);
    const source = readFileSync(join(repoRoot, readme), "utf8").replace(/\s+/g, " ");
    expect(source.includes(figure), `${readme} says "${figure}"`).toBe(true);
  });
});

describe("the tag descriptions", () => {
  it("describe every tag with more than a line", () => {
    for (const tag of contract.tags) expect(tag.description.trim().split("\n").length, tag.name).toBeGreaterThan(2);
  });
});
