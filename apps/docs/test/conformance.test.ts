// The site's "Conformance" page: the conformance suite's last recorded run as a grid a reader takes in
// at a glance (a row per scenario and storage, a column per target and for the mixed fleet, the
// refreshes per expiry and the worst wait), built from the data, so a new target, storage or
// scenario takes its place; it names every failed run and says how to run the suite. In Chromium the
// grid spans the content area at 1280 px. The built page carries the run committed in
// tools/conformance/results/last-run.json.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "@tenant-integration/browser-testing";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { conformanceGrid, conformancePage, gridTargets, withConformance } from "../scripts/conformance.mjs";
import { serveStatic } from "./support/static-server.js";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "package.json"));

const result = (scenario: string, storage: string, mix: string, passed = true) => ({
  scenario,
  storage,
  mix,
  passed,
  runtimes: [`${mix} 1.0`],
  refreshes: passed ? 2 : 3,
  expiries: 2,
  worstWaitMs: 120,
  failures: passed
    ? []
    : ["single-redemption: refresh token sha256:0123456789ab… (family fam_x) was presented 2 times: by a0, by a3"],
});

const REPORT = {
  date: "2026-11-27T01:00:00.000Z",
  geometry: "reduced",
  redis: "7.0.15",
  runtimes: ["chromium 156", "go 1.26.8", "node 20.20.2", "python 3.11.7"],
  passed: 5,
  failed: 1,
  scenarios: {
    "holder-paused": "A holder stopped past the stale bound keeps everyone's session.",
    revoke: "A revoke signs every process out.",
  },
  results: [
    result("holder-paused", "file", "node"),
    result("holder-paused", "file", "node"),
    result("holder-paused", "file", "go"),
    result("holder-paused", "file", "mixed", false),
    result("holder-paused", "redis", "python"),
    result("revoke", "memory", "go"),
  ],
};

/** The grid's rows as the text of their cells. */
const rows = (html: string): string[][] =>
  [...html.matchAll(/<tr[^>]*>(.*?)<\/tr>/g)].map(([, row]) =>
    [...row!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map(([, cell]) => cell!.replace(/<[^>]+>/g, "")),
  );

describe("the Conformance page's grid", () => {
  it("has a column per target the run holds, in the kits' order, then the mixed fleet, refreshes per expiry and worst wait", () => {
    const [head] = rows(conformanceGrid(REPORT));
    expect(head).toEqual([
      "scenario",
      "storage",
      "TypeScript (Node)",
      "Python",
      "Go",
      "mixed fleet",
      "refreshes / expiries",
      "worst wait",
    ]);
  });

  it("has a row per scenario and storage, each target's runs passed out of run, – where it did not run, ✗ where one failed", () => {
    const [, file, redis, memory] = rows(conformanceGrid(REPORT));
    expect(file).toEqual(["holder-paused", "file", "✓ 2/2", "–", "✓ 1/1", "✗ 0/1", "9 / 8", "120 ms"]);
    expect(redis).toEqual(["redis", "–", "✓ 1/1", "–", "–", "2 / 2", "120 ms"]);
    expect(memory).toEqual(["revoke", "memory", "–", "–", "✓ 1/1", "–", "2 / 2", "120 ms"]);
    expect(conformanceGrid(REPORT)).toMatch(/<td class="fail"[^>]*>✗ 0\/1<\/td>/);
  });

  it("says why a target did not run a scenario that needs a feature its actor lacks (many sessions), in the cell and under the grid", () => {
    const why = "its actor does not declare the sessions feature: its kit has no sessions object yet";
    const report = {
      ...REPORT,
      results: [...REPORT.results, result("many-sessions", "redis", "go")],
      notRun: [{ scenario: "many-sessions", targets: ["node", "python"], why }],
    };
    const grid = conformanceGrid(report);
    expect(rows(grid).at(-1)).toEqual(["many-sessions", "redis", "–", "–", "✓ 1/1", "–", "2 / 2", "120 ms"]);
    expect(grid).toContain(`<td class="none" data-label="TypeScript (Node)" title="not run: ${why}">–</td>`);
    expect(grid).toContain(`<td class="none" data-label="mixed fleet" title="not run on this storage">–</td>`);
    expect(conformancePage({ ...report, scenarios: REPORT.scenarios })).toContain(
      `- \`many-sessions\` on node, python: ${why}.`,
    );
    expect(conformancePage(REPORT)).not.toContain("Not run");
  });

  it("takes a new target, storage and scenario from the data: a Rust kit on PostgreSQL gets its column and row", () => {
    const report = {
      ...REPORT,
      results: [...REPORT.results, result("lease-lost", "postgres", "rust"), result("lease-lost", "postgres", "mixed")],
    };
    expect(gridTargets(report.results).map((target: { label: string }) => target.label)).toEqual([
      "TypeScript (Node)",
      "Python",
      "Go",
      "rust",
      "mixed fleet",
    ]);
    const last = rows(conformanceGrid(report)).at(-1);
    expect(last).toEqual(["lease-lost", "postgres", "–", "–", "–", "✓ 1/1", "✓ 1/1", "4 / 4", "120 ms"]);
  });

  it("labels the Java target's column after Go's, before the mixed fleet", () => {
    const report = { ...REPORT, results: [result("revoke", "memory", "java"), ...REPORT.results] };
    expect(gridTargets(report.results).map((target: { label: string }) => target.label)).toEqual([
      "TypeScript (Node)",
      "Python",
      "Go",
      "Java",
      "mixed fleet",
    ]);
  });

  it("names the scenario's summary where the scenario is named, and escapes what it shows", () => {
    const report = { ...REPORT, results: [result("a<b", "file", "node")], scenarios: { "a<b": 'says "x" & <y>' } };
    const grid = conformanceGrid(report);
    expect(grid).toContain('title="says &quot;x&quot; &amp; &lt;y&gt;"><code>a&lt;b</code>');
  });
});

describe("the Conformance page", () => {
  const page: string = conformancePage(REPORT);

  it("says when and at which geometry the run was made, what passed, and that Go and Java are targets", () => {
    expect(page).toContain("2026-11-27, at the reduced geometry of every test run");
    expect(page).toContain("**5 runs passed, 1 failed**");
    expect(page).toContain("in TypeScript, Python, Go or Java or all of them at once");
    expect(page).toContain(conformanceGrid(REPORT));
  });

  it("names every failed run with its first failure, and lists the scenarios with their summaries", () => {
    expect(page).toContain("- `holder-paused` on file (mixed): single-redemption: refresh token sha256:0123456789ab…");
    expect(page).toContain("- `holder-paused`: A holder stopped past the stale bound keeps everyone's session.");
  });

  it("is a section of its own, after the contract's tags, which stay as they were", () => {
    const contract = { tags: [{ name: "OAuth", description: "x" }] };
    const read = withConformance(contract, REPORT);
    expect(read.tags.map((tag: { name: string }) => tag.name)).toEqual(["OAuth", "Conformance"]);
    expect(read.tags[1]).toMatchObject({ "x-traitTag": true });
    expect(contract.tags).toHaveLength(1);
  });
});

describe("the built site", () => {
  const recorded = JSON.parse(
    readFileSync(require.resolve("@tenant-integration/conformance/results/last-run.json"), "utf8"),
  );

  it("shows the last recorded run of the suite", () => {
    const html = readFileSync(join(here, "..", "dist", "index.html"), "utf8");
    expect(html).toContain(`${recorded.passed} runs passed, ${recorded.failed} failed`);
    expect(html).toContain("pnpm conformance");
  });

  it("draws the grid across the content area at 1280 px, a row per scenario and storage of the run", async () => {
    const server = await serveStatic(join(here, "..", "dist"));
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${server.url}#/conformance`, { waitUntil: "load" });
      const grid = page.locator(".conformance-grid table");
      await grid.waitFor();
      const sizes = await grid.evaluate((table) => {
        const content = table.closest("[data-testid='middle-panel']")!.parentElement!.getBoundingClientRect();
        const box = table.getBoundingClientRect();
        return {
          grid: box.width,
          content: content.width,
          // How far the table runs past its own container (the prose column, when not widened): 0 when it fits.
          overflow: Math.max(0, box.right - table.parentElement!.getBoundingClientRect().right),
          rows: (table as HTMLTableElement).tBodies[0]!.rows.length,
        };
      });
      // The content area is what lies right of the sidebar; the prose column alone is half of it.
      expect(sizes.grid).toBeGreaterThan(0.8 * sizes.content);
      expect(sizes.overflow).toBeLessThanOrEqual(1);
      const pairs = new Set(
        recorded.results.map((r: { scenario: string; storage: string }) => `${r.scenario}/${r.storage}`),
      );
      expect(sizes.rows).toBe(pairs.size);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});
