// The report's verdicts (report.mjs): what BENCHMARKS.md's last column says for every kind of row.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { benchmarksMarkdown, markdownTable, summary, tally, verdictCell } from "./report.mjs";
import { judgedRow, pairedRatios } from "./stats.mjs";

const row = (ratios, aa, goal = { atMost: 1.1 }) =>
  judgedRow({
    metric: `row ${ratios.join(",")}`,
    value: "v",
    c: pairedRatios(ratios),
    aa: aa && pairedRatios(aa),
    style: "overhead",
    goal,
    goalText: "≤ 10 %",
  });

describe("the report", () => {
  const met = row([1.0, 1.01, 1.02, 1.03, 1.04], [0.99, 0.995, 1.0, 1.005, 1.01]);
  const missed = row([1.3, 1.31, 1.32, 1.33, 1.34], [0.99, 0.995, 1.0, 1.005, 1.01]);
  const noise = row([1.0, 1.01, 1.03, 1.04, 1.05], [0.8, 0.91, 1.0, 1.11, 1.2]);
  const noAA = row([1.0, 1.01, 1.02, 1.03, 1.04], undefined);
  const exact = { metric: "bytes", value: "1.5×", goal: "≤ 1.15×", met: false, exact: true };
  const legacy = { metric: "old timed row", value: "+3 %", goal: "≤ 10 %", met: true };
  const info = { metric: "no goal", value: "3", goal: "", met: null };
  const failed = { metric: "broken", value: "failed: x", goal: "", met: false, failed: true };
  const rows = [met, missed, noise, noAA, exact, legacy, info, failed];

  test("each verdict is marked as the rule decided it", () => {
    assert.deepEqual(rows.map(verdictCell), [
      "met",
      "**missed**",
      "*noise*",
      "met (no A/A)",
      "**missed**",
      "met (no A/A)",
      "",
      "**missed**",
    ]);
  });

  test("the counts keep noise apart from met and missed, and name the goals judged without an A/A", () => {
    const t = tally(rows);
    assert.deepEqual([t.met, t.missed, t.noise, t.failed.length], [3, 2, 1, 1]);
    assert.deepEqual(
      t.withoutAA.map((r) => r.metric),
      [noAA.metric, "old timed row"],
    );
    assert.equal(summary(rows), "8 figures; goals: 3 met, 2 missed, 1 noise, 2 judged without an A/A; rows failed: 1.");
  });

  test("BENCHMARKS.md states the rule at the top, above the table", () => {
    const page = benchmarksMarkdown({ machine: "m", date: "d", rows, methods: ["### x\n\ny\n"] });
    const rule = page.indexOf("A goal is\n**met** only when the whole middle half");
    assert.ok(rule > 0 && rule < page.indexOf("| metric |"));
    assert.match(page, /A row is \*\*noise\*\* when its A\/A's middle half is wider than the distance/);
    assert.ok(page.includes(markdownTable(rows)));
  });
});
