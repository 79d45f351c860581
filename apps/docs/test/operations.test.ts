// Each operation's own section of the reference, in the system Chromium, reached the way a reader
// reaches it: the tag in the sidebar, then the operation under it. Within that section alone (not
// anywhere on the page) the reader must find every x-assumption that qualifies the operation, its
// parameters, request body, responses, headers and the schemas they use, as well as every
// parameter, request media type and response status, and the label of each response's example.
// Redoc shows one tab at a time (a response status, a branch of a one-of or any-of, a media type):
// the test clicks through them, as a reader would, and reads the section after each click.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, type Browser, type Page } from "@tenant-integration/browser-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { ASSUMPTION_LABEL } from "../scripts/prepare.mjs";
import { contract } from "./support/contract.js";
import { operationDetails, type OperationDetails } from "./support/operations.js";
import { serveStatic, type StaticServer } from "./support/static-server.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
/** A part of the page (playwright-core's Locator). */
type Locator = ReturnType<Page["locator"]>;
const screenshots = join(docsDir, "test-results", "screenshots");

let server: StaticServer;
let browser: Browser;
let page: Page;

const squash = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Follows the sidebar to the operation: its tag first, then its entry; returns its section. */
async function navigateTo(op: OperationDetails): Promise<Locator> {
  await page.goto(server.url, { waitUntil: "load" });
  const tagLink = page.locator(`a[href='/${op.tag.toLowerCase()}']`).filter({ visible: true }).first();
  await tagLink.click();
  const entry = page
    .locator(`a[href='#/${op.tag.toLowerCase()}/${op.operationId.toLowerCase()}']`)
    .filter({ visible: true, hasText: op.summary })
    .first();
  await entry.click();
  await page.waitForURL(new RegExp(`#/${op.tag.toLowerCase()}/${op.operationId.toLowerCase()}$`));
  const section = page.locator(`[data-section-id='/${op.tag.toLowerCase()}/${op.operationId.toLowerCase()}']`);
  await section.locator("h2").filter({ hasText: op.summary }).first().waitFor();
  return section;
}

/**
 * The text of the section as a reader can read it: as it opens, then after choosing each tab in
 * turn (statuses, one-of branches, samples) and opening each media-type menu of the request body.
 */
async function readableText(section: Locator): Promise<string> {
  const seen: string[] = [await section.innerText()];
  const tabs = section.locator("[role='tab']").filter({ visible: true });
  // Each tab, and under it each tab it reveals (the branches of a response's one-of, say).
  for (let i = 0; i < (await tabs.count()); i++) {
    await tabs.nth(i).click();
    seen.push(await section.innerText());
    for (let j = i + 1; j < (await tabs.count()); j++) {
      await tabs.nth(j).click();
      seen.push(await section.innerText());
      await tabs.nth(i).click();
    }
  }
  // The response samples' status buttons (right panel), each showing its example and label.
  const sampleButtons = section
    .locator(".panel-response-samples button[type='button']")
    .filter({ visible: true, hasText: /^\d{3}$/ });
  for (let i = 0; i < (await sampleButtons.count()); i++) {
    await sampleButtons.nth(i).click();
    seen.push(await section.innerText());
  }
  // A request body with several media types offers them in a menu.
  const menus = section.locator("[data-testid='middle-panel'] button[aria-haspopup='menu']").filter({ visible: true });
  for (let i = 0; i < (await menus.count()); i++) {
    await menus.nth(i).click();
    seen.push(
      await page
        .locator("[role='menu']")
        .filter({ visible: true })
        .allInnerTexts()
        .then((texts) => texts.join("\n")),
    );
    await page.keyboard.press("Escape");
  }
  return squash(seen.join("\n"));
}

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  server = await serveStatic(join(docsDir, "dist"));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const operations = operationDetails();

describe("each operation's section, reached through the sidebar", () => {
  it("covers every operation of the contract", () => {
    expect(operations.map((op) => `${op.method} ${op.path}`).sort()).toEqual(
      Object.entries(contract.paths)
        .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
        .sort(),
    );
  });

  describe.each(operations.map((op) => [`${op.method} ${op.path}`, op] as const))("%s", (_name, op) => {
    let text = "";

    beforeAll(async () => {
      const section = await navigateTo(op);
      text = await readableText(section);
      await section.screenshot({ path: join(screenshots, `operation-${op.operationId}.png`) });
    }, 120_000);

    it("shows every assumption of the operation, its parameters, body, responses, headers and schemas", () => {
      expect(op.assumptions.length).toBeGreaterThan(0);
      const missing = op.assumptions.filter(
        ({ text: assumption }) => !text.includes(`${ASSUMPTION_LABEL} ${squash(assumption)}`),
      );
      expect(missing.map(({ pointer }) => pointer)).toEqual([]);
    });

    it("shows each parameter by name", () => {
      for (const name of op.parameters) expect(text, name).toMatch(new RegExp(`(^|\\s)${name}(\\s|$)`));
    });

    it("shows each media type of the request body", () => {
      for (const type of op.requestMediaTypes) expect(text, type).toContain(type);
    });

    it("shows each response status with its description, and the label of its first example", () => {
      for (const response of op.responses) {
        expect(text, response.status).toMatch(new RegExp(`(^|\\s)${response.status}(\\s|$)`));
        expect(text, `${response.status} description`).toContain(response.descriptionStart);
        if (response.exampleLabel !== null)
          expect(text, `${response.status} example label`).toContain(response.exampleLabel);
      }
    });
  });
});
