// What issue 27 found missing beside Stripe's and GitHub's references, each checked on the built
// page in the system Chromium or against the sources it must follow: every operation offers its
// TypeScript, Python, Go, Java and curl samples and, where it takes a body, Redoc's "Payload", which follows
// the example menu; the contract is downloadable (openapi.yaml and openapi.json beside index.html,
// the bundle byte for byte); the Servers box shows no markdown backticks; no guide table is cut off
// at the right edge; a "Changelog" page says honestly what is released; the guides carry a catalogue
// of every stable error code of the kits and the OAuth codes; and `pnpm start` registers the client
// the quick start's Node and Python snippets use.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, type Browser, type Page } from "@tenant-integration/browser-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module of the build, without type declarations
import { samplesDir } from "../scripts/code-samples.mjs";
// @ts-expect-error -- a plain ES module of the build, without type declarations
import { pendingChangesets, releasedChangelogs } from "../scripts/changelog.mjs";
import { codeBlocks, contract, section } from "./support/contract.js";
import { serveStatic, type StaticServer } from "./support/static-server.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(docsDir, "..", "..");
const screenshots = join(docsDir, "test-results", "reference-panel");
const require = createRequire(join(docsDir, "package.json"));

interface Operation {
  operationId: string;
  path: string;
  tag: string;
  hasBody: boolean;
}
const operations: Operation[] = Object.entries(contract.paths).flatMap(([path, item]) =>
  Object.values(item as unknown as Record<string, { operationId: string; tags: string[]; requestBody?: unknown }>).map(
    (op) => ({
      operationId: op.operationId,
      path,
      tag: op.tags[0]!,
      hasBody: op.requestBody !== undefined,
    }),
  ),
);
const lines = (source: string): string[] =>
  source
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter((line) => line !== "");

describe("the reference in Chromium", () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await serveStatic(join(docsDir, "dist"));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const open = async (hash = ""): Promise<Page> => {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${server.url}${hash}`);
    return page;
  };
  /** The request panel of `path` that shows the language `language` and the text `text`. */
  const panelOf = (path: string, language: string, text: string) =>
    page
      .locator("div")
      .filter({ has: page.getByText(path, { exact: true }) })
      .filter({ has: page.getByText(language, { exact: true }) })
      .filter({ hasText: text })
      .last();
  /** Opens the language menu of the panel showing `current`; resolves to the menu's entries. */
  const languageMenu = async (operation: Operation, current: string, text: string): Promise<string[]> => {
    const panel = panelOf(operation.path, current, text);
    await expect.poll(() => panel.isVisible()).toBe(true);
    await panel.getByText(current, { exact: true }).click();
    const items = page.getByRole("menuitem").filter({ visible: true });
    await expect.poll(() => items.count()).toBeGreaterThan(0);
    return (await items.allInnerTexts()).map((entry) => entry.trim());
  };

  it.each(operations.map((operation) => [operation.operationId, operation] as const))(
    "%s offers TypeScript, Python, Go, Java and curl (and Payload with a body), and shows the curl sample",
    async (operationId, operation) => {
      await open(`#/${operation.tag.toLowerCase()}/${operationId.toLowerCase()}`);
      try {
        const [firstTs] = lines(readFileSync(join(samplesDir, `${operationId}.ts`), "utf8")).filter(
          (line) => !line.startsWith("//"),
        );
        const menu = await languageMenu(operation, "TypeScript", firstTs!);
        expect(menu).toEqual(["TypeScript", "Python", "Go", "Java", "curl", ...(operation.hasBody ? ["Payload"] : [])]);
        await page.getByRole("menuitem").filter({ visible: true }).getByText("curl", { exact: true }).click();
        const curl = lines(readFileSync(join(samplesDir, `${operationId}.sh`), "utf8"));
        const panel = panelOf(operation.path, "curl", curl.at(-1)!);
        await expect.poll(() => panel.isVisible()).toBe(true);
        const text = (await panel.innerText()).replace(/\s+/g, " ");
        for (const line of curl) expect(text).toContain(line);
      } finally {
        await page.close();
      }
    },
  );

  it("shows the request body of the example chosen in the panel: a code exchange, then a refresh", async () => {
    const token = operations.find(({ operationId }) => operationId === "exchangeToken")!;
    await open("#/oauth/exchangetoken");
    try {
      await languageMenu(token, "TypeScript", "createTokenManager");
      await page.getByRole("menuitem").filter({ visible: true }).getByText("Payload", { exact: true }).click();
      const panel = panelOf(token.path, "Payload", "grant_type");
      await expect
        .poll(async () => (await panel.innerText()).includes('"grant_type": "authorization_code"'))
        .toBe(true);
      expect(await panel.innerText()).toContain('"code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"');
      await panel.getByText("Exchange a code", { exact: true }).click();
      await page
        .getByRole("menuitem")
        .filter({ visible: true })
        .getByText("Refresh the access token", { exact: true })
        .click();
      await expect.poll(async () => (await panel.innerText()).includes('"grant_type": "refresh_token"')).toBe(true);
      expect(await panel.innerText()).toContain('"refresh_token": "rt_tGzv3JOkF0XG5Qx2TlKWIA"');
      await page.screenshot({ path: join(screenshots, "refresh-payload.png") });
    } finally {
      await page.close();
    }
  });

  it("links the contract for download, offline: openapi.yaml and openapi.json beside index.html, the bundle byte for byte", async () => {
    await open();
    try {
      for (const file of ["openapi.yaml", "openapi.json"]) {
        const link = page.getByText(file, { exact: true }).filter({ visible: true }).first();
        await expect.poll(() => link.isVisible()).toBe(true);
        const served = await page.evaluate(async (url) => (await fetch(url)).text(), new URL(file, server.url).href);
        expect(served, file).toBe(readFileSync(require.resolve(`@tenant-integration/openapi/${file}`), "utf8"));
      }
      const download = page.waitForEvent("download");
      await page.getByText("openapi.yaml", { exact: true }).filter({ visible: true }).first().click();
      expect((await download).suggestedFilename()).toBe("openapi.yaml");
    } finally {
      await page.close();
    }
  });

  it("shows the Servers box as plain text, without markdown backticks", async () => {
    await open();
    try {
      const box = page
        .locator("div")
        .filter({ has: page.getByText("Servers", { exact: true }) })
        .filter({ hasText: "One tenant." })
        .last();
      await expect.poll(() => box.isVisible()).toBe(true);
      const text = await box.innerText();
      expect(text).toContain("start with /api/v1, whose v1 is the API version");
      expect(text).not.toContain("`");
    } finally {
      await page.close();
    }
  });

  it("fits every table of the guides in its column: none is cut off at the right edge (the token lifecycle's six columns)", async () => {
    await open("#/section/Token-lifecycle");
    try {
      const wrappers = page.locator(".md-table-wrapper");
      await expect.poll(() => wrappers.count()).toBeGreaterThan(4);
      await page
        .getByText("The table of section 3 of the service description", { exact: false })
        .scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(screenshots, "token-lifecycle-table.png") });
      const overflowing = await wrappers.evaluateAll((all) =>
        all
          .filter((wrapper) => wrapper.scrollWidth > wrapper.clientWidth + 1)
          .map((wrapper) => `${wrapper.textContent?.slice(0, 40)}: ${wrapper.scrollWidth} > ${wrapper.clientWidth}`),
      );
      expect(overflowing).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("has a Changelog page that says what is released, and lists the pending changesets", async () => {
    await open("#/changelog");
    try {
      const released = releasedChangelogs(repoRoot) as unknown[];
      const pending = pendingChangesets(repoRoot) as { file: string }[];
      const body = page
        .locator("h2")
        .filter({ hasText: `Unreleased (${pending.length} pending changesets)` })
        .first();
      await expect.poll(() => body.isVisible()).toBe(true);
      await page.screenshot({ path: join(screenshots, "changelog.png") });
      if (released.length === 0)
        await expect
          .poll(() => page.getByText("Nothing is released yet.", { exact: true }).first().isVisible())
          .toBe(true);
      for (const { file } of pending)
        expect(await page.getByText(file, { exact: true }).count(), file).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });
});

describe("the error code catalogue of the guides", () => {
  /** The codes of the first column of the catalogue's tables. */
  const catalogueCodes = (): Set<string> =>
    new Set([...section("Error code catalogue").matchAll(/^\| `([A-Za-z_]+)` \|/gm)].map(([, code]) => code!));
  const read = (path: string): string => readFileSync(join(repoRoot, path), "utf8");
  /** The string literals of a TypeScript union or a Python Literal named `name` in `path`. */
  const union = (path: string, name: string): string[] => {
    const source = read(path);
    const start = source.search(new RegExp(`\\b${name}\\b\\s*=`));
    expect(start, `${name} in ${path}`).toBeGreaterThan(-1);
    const body = source.slice(start).split(/;\n|\]\n/)[0]!;
    return [...body.matchAll(/"([A-Z_]+)"/g)].map(([, code]) => code!);
  };
  const KIT_CODES: [string, string][] = [
    ["packages/token-manager/src/errors.ts", "ErrorCode"],
    ["packages/token-manager/src/node/file-storage-error.ts", "FileStorageErrorCode"],
    ["packages/token-store-redis/src/errors.ts", "RedisStorageErrorCode"],
    ["packages/client/src/errors.ts", "TenantClientErrorCode"],
    ["packages/python/src/tenant_integration/token_errors.py", "TokenErrorCode"],
    ["packages/python/src/tenant_integration/storage/errors.py", "FileStorageErrorCode"],
    ["packages/python/src/tenant_integration/storage/errors.py", "RedisStorageErrorCode"],
    ["packages/python/src/tenant_integration/storage/errors.py", "PostgresStorageErrorCode"],
  ];

  it.each(KIT_CODES)("lists every code of %s (%s)", (path, name) => {
    const codes = union(path, name);
    expect(codes.length).toBeGreaterThan(3);
    const listed = catalogueCodes();
    expect(codes.filter((code) => !listed.has(code))).toEqual([]);
  });

  it("lists every code of the Python client's errors, and the OAuth error codes of the guides' Errors section", () => {
    const listed = catalogueCodes();
    const python = [
      ...read("packages/python/src/tenant_integration/client_errors.py").matchAll(/``([A-Z_]{4,})``/g),
    ].map(([, code]) => code!);
    expect(python.length).toBeGreaterThan(8);
    expect(python.filter((code) => !listed.has(code))).toEqual([]);
    const oauth = [...section("Errors").matchAll(/^- `([a-z_]+)`:/gm)].map(([, code]) => code!);
    expect(oauth).toContain("invalid_grant");
    expect([...oauth, "access_denied"].filter((code) => !listed.has(code))).toEqual([]);
  });

  /** The codes of the Go kit: `CodeX Code = "X"` of tokenmanager and transport, `CodeX = "X"` of tenanttest. */
  const goCodes = (): string[] =>
    [
      "packages/go/tokenmanager/errors.go",
      "packages/go/transport/errors.go",
      "packages/go/tenanttest/sandbox.go",
    ].flatMap((path) =>
      [...read(path).matchAll(/^\s*Code\w+\s+(?:Code\s+)?= "([A-Z_]+)"$/gm)].map(([, code]) => code!),
    );

  it("lists every code of the Go kit (tokenmanager, transport, tenanttest), each with its Go error", () => {
    const codes = goCodes();
    expect(codes).toEqual(expect.arrayContaining(["SESSION_ENDED", "NETWORK_ERROR", "SANDBOX_FAILED"]));
    const listed = catalogueCodes();
    expect(codes.filter((code) => !listed.has(code))).toEqual([]);
    // The Go column names sentinels the kit has: `ErrX` of tokenmanager, `transport.ErrX`.
    const rows = section("Error code catalogue")
      .split("\n")
      .filter((line) => /^\| `[A-Z_]+` \|/.test(line));
    const sentinels = new Set(
      ["packages/go/tokenmanager/errors.go", "packages/go/transport/errors.go"].flatMap((path) =>
        [...read(path).matchAll(/^\s*(Err\w+)\s+= &Error\{/gm)].map(([, name]) =>
          path.includes("transport") ? `transport.${name}` : name!,
        ),
      ),
    );
    for (const row of rows) {
      const go = row.split("|")[4]!;
      for (const [, name] of go.matchAll(/`((?:transport\.)?Err\w+)`/g)) expect(sentinels, row).toContain(name);
      if (codes.includes(/^\| `([A-Z_]+)`/.exec(row)![1]!)) expect(go.trim(), row).not.toMatch(/^—/);
    }
  });

  it("lists no code the kits do not have", () => {
    const known = new Set([
      ...goCodes(),
      ...KIT_CODES.flatMap(([path, name]) => union(path, name)),
      ...[...section("Errors").matchAll(/^- `([a-z_]+)`:/gm)].map(([, code]) => code!),
      "access_denied",
    ]);
    expect([...catalogueCodes()].filter((code) => !known.has(code))).toEqual([]);
  });
});

describe("`pnpm start`", () => {
  it("registers the client of the quick start's Node and Python snippets, with its redirect URI", () => {
    const start = readFileSync(join(repoRoot, "tools", "start", "start.mjs"), "utf8");
    const guide = section("Quick start");
    for (const [language, id, redirect] of [
      ["ts", /clientId: "([^"]+)"/, /const redirectUri = "([^"]+)"/],
      ["python", /client_id="([^"]+)"/, /redirect_uri="([^"]+)"/],
    ] as const) {
      for (const block of codeBlocks(guide, language).filter(
        (code) => /demo-cli|client_id=/.test(code) && !code.includes("localStorage"),
      )) {
        const client = `id=${id.exec(block)![1]},redirect=${redirect.exec(block)![1]}`;
        expect(start, `${language}: ${client}`).toContain(client);
      }
    }
  });
});
