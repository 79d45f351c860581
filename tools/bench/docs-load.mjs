// Docs page load time in Chromium: the offline Redoc page (apps/docs/dist/index.html) served on
// loopback, from navigation until the operations are rendered. Median of 5 fresh pages.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "@tenant-integration/browser-testing";
import { rowLine } from "./report.mjs";

/** How the row was measured, for BENCHMARKS.md. */
export const docsLoadMethod =
  "The offline docs page (`apps/docs/dist/index.html`, built by `pnpm build`) served by a node:http server on loopback, opened in the system Chromium (playwright-core) 5 times, each in a fresh browser context: from navigation to the load event, and to the first rendered operation (`/oauth/token` attached to the page); the median of the 5 (no goal, no comparison). Rerun: `node tools/bench/docs-load.mjs` after `pnpm build`.";

export async function docsLoad(root) {
  const html = readFileSync(join(root, "apps", "docs", "dist", "index.html"));
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html),
  );
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const browser = await launchChromium();
  try {
    const url = `http://127.0.0.1:${server.address().port}/`;
    const loads = [];
    const rendered = [];
    for (let i = 0; i < 5; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const start = performance.now();
      await page.goto(url, { waitUntil: "load" });
      loads.push(performance.now() - start);
      await page.getByText("/oauth/token").first().waitFor({ state: "attached" });
      rendered.push(performance.now() - start);
      await context.close();
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[2];
    return [
      {
        metric: `docs page load in Chromium (${(html.length / 1024 / 1024).toFixed(1)} MB offline HTML)`,
        value: `${Math.round(median(loads))} ms to load, ${Math.round(median(rendered))} ms until operations render (median of 5)`,
        goal: "",
        met: null,
      },
    ];
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

// `node tools/bench/docs-load.mjs` prints the row alone (build first).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await docsLoad(join(dirname(fileURLToPath(import.meta.url)), "..", "..")))
    console.log(rowLine(row));
}
