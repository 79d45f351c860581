// The site's "Conformance" page: it shows the conformance suite's last recorded run as a matrix of
// scenario × storage × target, names every failed run, and says how to run the suite. The built
// page carries the run committed in tools/conformance/results/last-run.json.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { conformancePage, withConformance } from "../scripts/conformance.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "package.json"));

const result = (scenario: string, storage: string, mix: string, passed = true) => ({
  scenario,
  storage,
  mix,
  passed,
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
  runtimes: ["chromium 156", "node 20.20.2", "python 3.11.7"],
  passed: 3,
  failed: 1,
  scenarios: { "holder-paused": "A holder stopped past the stale bound keeps everyone's session." },
  results: [
    result("holder-paused", "file", "node"),
    result("holder-paused", "file", "node"),
    result("holder-paused", "file", "python"),
    result("holder-paused", "file", "mixed", false),
  ],
};

describe("the Conformance page", () => {
  const page: string = conformancePage(REPORT);

  it("counts each target's runs per scenario and storage, and adds up refreshes against expiries", () => {
    expect(page).toContain(
      "| `holder-paused` | file | TypeScript ✓ 2/2, Python ✓ 1/1, mixed **✗ 0/1** | 9 / 8 | 120 ms |",
    );
  });

  it("says when and at which geometry the run was made, and what passed", () => {
    expect(page).toContain("2026-11-27, at the reduced geometry of every test run");
    expect(page).toContain("**3 runs passed, 1 failed**");
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
  it("shows the last recorded run of the suite", () => {
    const recorded = JSON.parse(
      readFileSync(require.resolve("@tenant-integration/conformance/results/last-run.json"), "utf8"),
    );
    const html = readFileSync(join(here, "..", "dist", "index.html"), "utf8");
    expect(html).toContain(`${recorded.passed} runs passed, ${recorded.failed} failed`);
    expect(html).toContain("pnpm conformance");
  });
});
