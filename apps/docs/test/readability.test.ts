// Issue 37: code comments in the samples had a contrast of 1.96:1 (dark) and 2.63:1 (light), code was
// cut at the edge of the code panel and of the guide column, and the copy button covered a sample's
// first line. Here, in the system Chromium, in the light and the dark theme (Redoc's own switch), at
// 1280 px and at a phone's 390 px: every text of the guides, of each tag's page and of each
// operation, with each language of its code samples, reads at 4.5:1 at least (WCAG 1.4.3), no line
// is cut sideways by a box that clips it or by the page, and no copy button covers code.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, type Browser, type Page } from "@tenant-integration/browser-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module of the build, without type declarations
import { SAMPLE_LANGUAGES } from "../scripts/code-samples.mjs";
import { contract } from "./support/contract.js";
import { coveredCodeLines, cutTexts, lowContrastTexts, useTheme } from "./support/readability.js";
import { serveStatic, type StaticServer } from "./support/static-server.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const screenshots = join(docsDir, "test-results", "readability");

const operations = Object.values(contract.paths).flatMap((item) =>
  Object.values(item as unknown as Record<string, { operationId: string; tags: string[] }>).map((op) => ({
    tag: op.tags[0]!.toLowerCase(),
    operationId: op.operationId.toLowerCase(),
  })),
);
const tags = ["oauth", "auth", "conformance", "changelog"];
const LANGUAGES: string[] = SAMPLE_LANGUAGES.map(({ label }: { label: string }) => label);
const WIDTHS = [1280, 390];
const THEMES = ["light", "dark"] as const;

let server: StaticServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  server = await serveStatic(join(docsDir, "dist"));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** What a reader cannot read on the page as it stands: low contrast, cut lines, covered code. */
async function unreadable(page: Page) {
  return {
    lowContrast: await lowContrastTexts(page),
    cut: await cutTexts(page),
    coveredCode: await coveredCodeLines(page),
  };
}
const readable = { lowContrast: [], cut: [], coveredCode: [] };

/** A page of its own at `width` in `theme`, on `path` of the site. */
async function open(width: number, theme: "light" | "dark", path = ""): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: theme });
  await page.goto(`${server.url}${path}`, { waitUntil: "load" });
  await page.locator("h1, h2").filter({ visible: true }).first().waitFor();
  await useTheme(page, theme);
  return page;
}

describe.each(THEMES)("the site in the %s theme", (theme) => {
  describe.each(WIDTHS)("at %i px", (width) => {
    it("the guides: every text readable, nothing cut", async () => {
      const page = await open(width, theme);
      try {
        expect(await unreadable(page)).toEqual(readable);
        await page.screenshot({ path: join(screenshots, `guides-${theme}-${width}.png`) });
      } finally {
        await page.close();
      }
    });

    it.each(tags)("the %s page: every text readable, nothing cut", async (tag) => {
      const page = await open(width, theme, `#/${tag}`);
      await page.locator(`[data-section-id='/${tag}']`).first().waitFor();
      try {
        expect(await unreadable(page)).toEqual(readable);
      } finally {
        await page.close();
      }
    });

    it.each(operations.map((op) => [op.operationId, op] as const))(
      "%s, its samples in every language: every text readable, nothing cut, no code under a button",
      async (_id, { tag, operationId }) => {
        const page = await open(width, theme, `#/${tag}/${operationId}`);
        try {
          const section = page.locator(`[data-section-id='/${tag}/${operationId}']`);
          await section.locator("h2").first().waitFor();
          await section.scrollIntoViewIfNeeded();
          const panel = section.locator(".panel-request-samples");
          let current = LANGUAGES[0]!;
          for (const language of LANGUAGES) {
            if (language !== current) {
              const menuButton = panel.getByText(current, { exact: true }).filter({ visible: true }).first();
              // The reader scrolls the menu's button up before opening it: the menu opens below it.
              await menuButton.evaluate((button) => button.scrollIntoView({ block: "start" }));
              await menuButton.click();
              const menu = page.locator("[role='menu']").filter({ visible: true });
              await menu.getByText(language, { exact: true }).first().click();
              await panel.getByText(language, { exact: true }).filter({ visible: true }).first().waitFor();
              current = language;
            }
            expect({ language, ...(await unreadable(page)) }).toEqual({ language, ...readable });
          }
          await panel.screenshot({ path: join(screenshots, `${operationId}-${theme}-${width}.png`) });
        } finally {
          await page.close();
        }
      },
    );
  });
});

describe("the check itself", () => {
  it("sees the faults issue 37 found: pale comments, a cut line, a covered first line", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.setContent(`<body style="background:#fbfbfc;color:#3b3c45">
        <p style="color:rgb(155,156,168)">// a comment at 2.63:1</p>
        <div style="width:200px;overflow:auto"><pre style="margin:0">import "github.com/tenant-integration/sdk/packages/go/tokenmanager"</pre></div>
        <div style="position:relative;width:400px"><pre style="margin:0">const a = 1; // the first line, under the button</pre>
          <button data-testid="copy-button" aria-label="Copy" style="position:absolute;top:0;left:40px;width:24px;height:24px"></button></div>
      </body>`);
      const found = await unreadable(page);
      expect(found.lowContrast.map(({ text, ratio }) => [text, ratio])).toEqual([["// a comment at 2.63:1", 2.63]]);
      expect(found.cut.map(({ text }) => text)).toEqual([
        'import "github.com/tenant-integration/sdk/packages/go/tokenm',
      ]);
      expect(found.coveredCode).toEqual([{ button: "Copy", line: "const a = 1; // the first line, under the button" }]);
    } finally {
      await page.close();
    }
  });
});
