// Opens dist/index.html in the system Chromium, served from a loopback port chosen at run time, and
// checks what a reader sees: every operation and scope, a working search, and a page that works
// offline (no request leaves localhost, no console error). Screenshots go to test-results/.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, type Browser, type Page } from "@tenant-integration/browser-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operations, scopes } from "./support/contract.js";
import { serveStatic, type StaticServer } from "./support/static-server.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const screenshots = join(docsDir, "test-results", "screenshots");

let server: StaticServer;
let browser: Browser;
let page: Page;
const requested: string[] = [];
const consoleErrors: string[] = [];

/** True for the URLs a page may load offline: its own loopback server, data: and blob: URLs. */
function isLocal(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === "data:" || protocol === "blob:") return true;
  return (protocol === "http:" || protocol === "https:") && ["127.0.0.1", "localhost", "[::1]"].includes(hostname);
}

/** Counts the elements with exactly this text that are rendered and not hidden. */
const visibleCount = (text: string) => page.getByText(text, { exact: true }).filter({ visible: true }).count();

const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);

/** The sidebar entry of a guide section or a tag: Redoc links it to `/section/<slug>` or `/<tag>`. */
const sidebarLink = (text: string) => page.locator("a[href^='/']").filter({ visible: true, hasText: exactly(text) });

/** A guide heading (its text; the anchor link inside it has only an aria-label). */
const guideHeading = (text: string) => page.locator("h2, h3").filter({ visible: true, hasText: exactly(text) });

async function openTag(name: string): Promise<void> {
  await sidebarLink(name).first().click();
  await page.waitForURL(new RegExp(`/${name.toLowerCase()}$`));
}

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  server = await serveStatic(join(docsDir, "dist"));
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // Every request passes through here; anything not local is recorded and refused.
  await context.route("**/*", (route) => {
    const url = route.request().url();
    requested.push(url);
    return isLocal(url) ? route.continue() : route.abort("blockedbyclient");
  });
  page = await context.newPage();
  page.on("request", (request) => requested.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => consoleErrors.push(String(error)));
  await page.goto(server.url, { waitUntil: "load" });
  await guideHeading("Quick start").waitFor();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the reference in Chromium", () => {
  it("renders the guides with their sidebar sections", async () => {
    for (const heading of [
      "Quick start",
      "Token lifecycle",
      "Scopes",
      "Errors",
      "Using another OAuth library",
      "What the service description leaves open",
      "Packages",
    ]) {
      expect(await sidebarLink(heading).count(), heading).toBeGreaterThan(0);
      expect(await guideHeading(heading).count(), heading).toBe(1);
    }
    await page.screenshot({ path: join(screenshots, "overview.png") });
    await guideHeading("Token lifecycle").scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshots, "token-lifecycle.png") });
  });

  it.each(scopes)("shows the scope %s", async (scope) => {
    expect(await visibleCount(scope)).toBeGreaterThan(0);
  });

  it("shows every operation with its summary, method and path", async () => {
    const byTag = new Map([
      ["OAuth", operations.filter((op) => op.path.startsWith("/oauth/"))],
      ["Auth", operations.filter((op) => op.path.startsWith("/api/"))],
    ]);
    expect([...byTag.values()].flat()).toHaveLength(operations.length);
    for (const [tag, ops] of byTag) {
      await openTag(tag);
      for (const op of ops) {
        // The operation's heading, then its request box, which reads "<METHOD> <path>".
        await page.getByText(op.summary, { exact: true }).filter({ visible: true }).first().waitFor();
        const endpoint = page
          .locator("button")
          .filter({ visible: true, hasText: new RegExp(`^${op.method}\\s*${op.path}$`, "i") });
        await endpoint.first().waitFor();
        expect(await visibleCount(op.summary), op.summary).toBeGreaterThan(0);
        expect(await endpoint.count(), `${op.method} ${op.path}`).toBeGreaterThan(0);
      }
      await page.screenshot({ path: join(screenshots, `tag-${tag.toLowerCase()}.png`), fullPage: false });
    }
  });

  it("finds /oauth/token with the search box", async () => {
    await page.getByText("Search", { exact: false }).filter({ visible: true }).first().click();
    const input = page.getByPlaceholder("Search docs...");
    await input.fill("/oauth/token");
    const hit = page
      .locator("[data-component-name='Search/SearchItem']")
      .filter({ hasText: "Exchange a code, or refresh the access token" });
    await hit.first().waitFor({ state: "visible" });
    expect(await hit.first().textContent()).toContain("/oauth/token");
    await page.screenshot({ path: join(screenshots, "search-oauth-token.png") });
    await page.keyboard.press("Escape");
  });

  it("loads nothing from outside localhost and logs no console error", () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
