// What the reference shows beside the contract's facts, in the system Chromium: every x-assumption
// of the contract, written where its operation, parameter, field, header or response is described,
// and the two guide diagrams drawn as SVG, legible in the light and the dark theme.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, type Browser, type Page } from "@tenant-integration/browser-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { ASSUMPTION_LABEL } from "../scripts/prepare.mjs";
import { assumptionPointers, contract, resolvePointer } from "./support/contract.js";
import { serveStatic, type StaticServer } from "./support/static-server.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const screenshots = join(docsDir, "test-results", "screenshots");

let server: StaticServer;
let browser: Browser;
let page: Page;

const squash = (text: string): string => text.replace(/\s+/g, " ").trim();

/**
 * The text of the reference as a reader can reach it: the overview (whose Servers panel shows the
 * server's description), then each tag's page, with each tab chosen in turn (a response status, a
 * branch of a one-of or any-of: Redoc shows one at a time), each tab it reveals chosen under it,
 * and each response panel opened and
 * closed, collecting the text after every click.
 */
async function readableText(): Promise<string> {
  const seen: string[] = [await page.locator("body").innerText()];
  const collect = async () => seen.push(await page.locator("body").innerText());
  for (const tag of contract.tags.map((t) => t.name)) {
    await page
      .locator("a[href^='/']")
      .filter({ visible: true, hasText: new RegExp(`^${tag}$`) })
      .first()
      .click();
    await page.locator("[role='tab']").first().waitFor();
    await collect();
    const tabs = page.locator("[role='tab']").filter({ visible: true });
    const panels = page
      .locator("[data-component-name='Panel/Panel'] > button, button[data-component-name='Panel/Panel']")
      .filter({ visible: true });
    for (let i = 0; i < (await tabs.count()); i++) {
      await tabs.nth(i).click();
      await collect();
      // The tabs a tab reveals (the branches of a response's any-of), each once, then back.
      for (let j = i + 1; j < (await tabs.count()); j++) {
        await tabs.nth(j).click();
        await collect();
        await tabs.nth(i).click();
      }
      for (let j = 0; j < (await panels.count()); j++) {
        await panels.nth(j).click();
        await collect();
      }
    }
  }
  return squash(seen.join("\n"));
}

let text = "";

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  server = await serveStatic(join(docsDir, "dist"));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(server.url, { waitUntil: "load" });
  await page
    .locator("h2")
    .filter({ hasText: /^Quick start$/ })
    .first()
    .waitFor();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the assumptions, where the reference describes what they qualify", () => {
  beforeAll(async () => {
    text = await readableText();
  }, 120_000);

  it("are found in the contract to check against", () => {
    expect(assumptionPointers().length).toBeGreaterThanOrEqual(20);
  });

  it.each(assumptionPointers())("shows the x-assumption of %s beside its description", (pointer) => {
    const node = resolvePointer(pointer) as { "x-assumption": string };
    expect(text).toContain(`${ASSUMPTION_LABEL} ${squash(node["x-assumption"])}`);
  });
});

describe("the guide diagrams", () => {
  const diagrams = () => page.locator("svg[role='img']");
  const textColour: Record<string, string> = {};

  it("draws the sign-in sequence and the token lifecycle as SVG with their labels", async () => {
    await page.goto(server.url, { waitUntil: "load" });
    await diagrams().first().waitFor();
    const labels = await diagrams().evaluateAll((svgs) => svgs.map((svg) => svg.getAttribute("aria-label")));
    expect(labels).toEqual([
      "Sign-in with PKCE: browser, integration, tenant",
      "Token lifecycle: access token and refresh token",
    ]);
    const sequence = squash((await diagrams().nth(0).textContent()) ?? "");
    for (const step of [
      "Browser",
      "Integration",
      "Tenant",
      "GET /oauth/authorize",
      "POST /oauth/token",
      "code_verifier",
    ])
      expect(sequence).toContain(step);
    const lifecycle = squash((await diagrams().nth(1).textContent()) ?? "");
    for (const part of [
      "active",
      "expired",
      "revoked",
      "replaced by a new refresh token",
      "15 minutes pass",
      "30 days pass",
      "POST /oauth/revoke",
      "refresh_token grant rotates it",
    ]) {
      expect(lifecycle).toContain(part);
    }
  });

  it.each(["light", "dark"])(
    "renders them with a size and text in the page's own colour in the %s theme",
    async (theme) => {
      await page.evaluate((mode) => {
        document.documentElement.classList.remove("light", "dark");
        document.documentElement.classList.add(mode);
      }, theme);
      for (let i = 0; i < 2; i++) {
        const diagram = diagrams().nth(i);
        await diagram.scrollIntoViewIfNeeded();
        const box = await diagram.boundingBox();
        expect(box?.width).toBeGreaterThan(300);
        expect(box?.height).toBeGreaterThan(150);
        // Text and lines take currentColor: the colour of the text around the diagram, whatever the theme.
        const colours = await diagram.evaluate((svg) => ({
          text: getComputedStyle(svg.querySelector("text")!).fill,
          page: getComputedStyle(svg.parentElement!).color,
          background: getComputedStyle(document.body).backgroundColor,
        }));
        expect(colours.text).toBe(colours.page);
        textColour[theme] = colours.text;
        await diagram.screenshot({ path: join(screenshots, `diagram-${i}-${theme}.png`) });
      }
      // The dark theme really changed the text colour, and the diagrams followed it.
      if (theme === "dark") expect(textColour["dark"]).not.toBe(textColour["light"]);
    },
  );
});
