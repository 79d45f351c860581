// The rule that judges every bench row against its goal (issue 41), as a specification: met only
// when the whole middle half of the paired rounds lies on the goal's side; the A/A beside every
// comparison; "noise" when the A/A is wider than the row's distance to its goal. Run by `pnpm test`
// (this package's `test` script, node:test).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  formatOverhead,
  judge,
  judgedRow,
  judgeRawRow,
  paired,
  pairedDifference,
  pairedRatios,
  quantile,
  spread,
} from "./stats.mjs";

/** Rounds of a baseline at 10 µs and a contender at `ratios[i]` times it: paired(contender, baseline) has those ratios. */
const rounds = (ratios) => ({ contender: ratios.map((r) => 10 * r), baseline: ratios.map(() => 10) });

/** An A/A whose middle half runs from `q1` to `q3` (ratios): five rounds, quartiles exactly there. */
const aaFrom = (q1, q3) => pairedRatios([q1 - 0.05, q1, (q1 + q3) / 2, q3, q3 + 0.05]);

describe("paired comparisons", () => {
  test("the quartiles are interpolated between the two nearest rounds", () => {
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
    assert.equal(quantile([1, 2, 3, 4, 5], 0.25), 2);
    assert.equal(quantile([5, 1, 4, 2, 3], 0.75), 4);
  });

  test("a row is the median of the rounds' own ratios, not the ratio of the medians", () => {
    // Rounds' ratios 3, 1, 0.33, 2, 1.8: their median is 1.8; the medians alone (3 and 3) would say 1×.
    const c = paired([3, 2, 1, 8, 9], [1, 2, 3, 4, 5]);
    assert.equal(c.ratio, 1.8);
    assert.equal(c.a / c.b, 1);
    assert.deepEqual([c.q1, c.q3, c.min, c.max], [1, 2, 1 / 3, 3]);
  });

  test("a difference row is the median of the rounds' own differences", () => {
    const c = pairedDifference([30, 31, 60, 33, 34], [10, 10, 10, 12, 10]);
    assert.equal(c.kind, "difference");
    assert.equal(c.difference, 21);
    assert.deepEqual([c.q1, c.q3], [21, 24]);
  });

  test("contenders measured in different rounds are refused", () => {
    assert.throws(() => paired([1, 2], [1]), /same rounds/);
    assert.throws(() => pairedDifference([], []), /same rounds/);
  });
});

describe("a goal is met only when the whole middle half of the rounds lies under it", () => {
  test("a median under the goal with the third quartile above it is missed", () => {
    // Median +8 % under a goal of ≤ +10 %, but a quarter of the rounds and more lie above +10 %.
    const { contender, baseline } = rounds([1.0, 1.04, 1.08, 1.12, 1.16]);
    const c = paired(contender, baseline);
    assert.ok(c.ratio <= 1.1, "the median alone would meet the goal");
    assert.ok(c.q3 > 1.1);
    assert.equal(judge(c, { atMost: 1.1 }, null).verdict, "missed");
  });

  test("a middle half wholly under the goal is met", () => {
    const c = pairedRatios([0.98, 1.0, 1.02, 1.04, 1.3]);
    assert.equal(c.q3, 1.04);
    assert.equal(judge(c, { atMost: 1.1 }, null).verdict, "met");
  });

  test("an at-least goal needs the first quartile at or above it", () => {
    const c = pairedRatios([0.45, 0.49, 0.6, 0.62, 0.7]);
    assert.ok(c.median >= 0.5, "the median alone would meet the goal");
    assert.equal(judge(c, { atLeast: 0.5 }, null).verdict, "missed");
    assert.equal(judge(pairedRatios([0.52, 0.55, 0.6, 0.62, 0.7]), { atLeast: 0.5 }, null).verdict, "met");
  });

  test("the rule holds for differences in ms and for plain values", () => {
    const cost = pairedDifference([14, 16, 18, 21, 30], [10, 10, 10, 10, 10]);
    assert.equal(cost.difference, 8);
    assert.equal(judge(cost, { atMost: 10 }, null).verdict, "missed", "the third quartile is 11 ms");
    const rate = spread([9e6, 12e6, 13e6, 14e6, 15e6]);
    assert.equal(judge(rate, { atLeast: 1e6 }, null).verdict, "met");
  });
});

describe("a row whose A/A is wider than its distance to the goal is noise", () => {
  test("an A/A wider than the gap makes a row noise, even with its middle half under the goal", () => {
    const c = pairedRatios([1.0, 1.01, 1.03, 1.04, 1.05]);
    assert.equal(judge(c, { atMost: 1.1 }, null).verdict, "met");
    // The A/A spans 0.91–1.11× (1.22× wide); the row is 1.10 / 1.03 = 1.068× from the goal.
    const judged = judge(c, { atMost: 1.1 }, aaFrom(0.91, 1.11));
    assert.equal(judged.verdict, "noise");
    assert.ok(judged.aaWidth > judged.gap);
  });

  test("a missed row is noise too when the A/A is wider than its gap", () => {
    const c = pairedRatios([1.08, 1.1, 1.12, 1.14, 1.16]);
    assert.equal(judge(c, { atMost: 1.1 }, aaFrom(0.95, 1.05)).verdict, "noise");
  });

  test("an A/A narrower than the gap leaves the verdict to the middle half", () => {
    const under = pairedRatios([1.0, 1.01, 1.02, 1.03, 1.04]);
    const over = pairedRatios([1.2, 1.22, 1.25, 1.27, 1.3]);
    const narrow = aaFrom(0.99, 1.01);
    assert.equal(judge(under, { atMost: 1.1 }, narrow).verdict, "met");
    assert.equal(judge(over, { atMost: 1.1 }, narrow).verdict, "missed");
  });

  test("ratios are compared as factors: the same relative A/A decides alike at 1× and at 8×", () => {
    const aa = aaFrom(0.9, 1.1); // 1.22× wide
    // 1.3× from the goal, at both scales: not noise
    assert.equal(judge(pairedRatios([1.3, 1.3, 1.3, 1.3, 1.3]), { atMost: 1.0 }, aa).verdict, "missed");
    assert.equal(judge(pairedRatios([6.5, 6.5, 6.5, 6.5, 6.5]), { atMost: 5.0 }, aa).verdict, "missed");
    // 1.1× from the goal, at both scales: noise
    assert.equal(judge(pairedRatios([1.1, 1.1, 1.1, 1.1, 1.1]), { atMost: 1.0 }, aa).verdict, "noise");
    assert.equal(judge(pairedRatios([5.5, 5.5, 5.5, 5.5, 5.5]), { atMost: 5.0 }, aa).verdict, "noise");
  });

  test("a difference's A/A is compared in its own unit", () => {
    const cost = pairedDifference([20, 21, 22, 23, 24], [0, 0, 0, 0, 0]); // +22 ms, goal ≤ 0 ms
    const aa = (q1, q3) => pairedDifference([q1 - 1, q1, (q1 + q3) / 2, q3, q3 + 1], [0, 0, 0, 0, 0]);
    assert.equal(judge(cost, { atMost: 0 }, aa(-5, 5)).verdict, "missed");
    assert.equal(judge(cost, { atMost: 0 }, aa(-15, 15)).verdict, "noise");
  });

  test("a comparison without its A/A is judged by its middle half and said to miss it", () => {
    const judged = judge(pairedRatios([1.0, 1.01, 1.02, 1.03, 1.04]), { atMost: 1.1 }, undefined);
    assert.deepEqual([judged.verdict, judged.aa], ["met", "missing"]);
  });
});

describe("rows", () => {
  test("a judged row shows its A/A beside its figure and says when it made the row noise", () => {
    const { contender, baseline } = rounds([1.0, 1.01, 1.03, 1.04, 1.05]);
    const c = paired(contender, baseline);
    const row = judgedRow({
      metric: "client vs openapi-fetch",
      value: formatOverhead(c),
      c,
      aa: aaFrom(0.91, 1.11),
      aaLabel: "openapi-fetch against itself",
      style: "overhead",
      goal: { atMost: 1.1 },
      goalText: "≤ 10 %",
    });
    assert.equal(row.verdict, "noise");
    assert.equal(row.met, false);
    assert.match(
      row.value,
      /^\+3\.0 % \(5 paired rounds: .*; A\/A \(openapi-fetch against itself\): middle half −9\.0 % to \+11\.0 %, wider than the row's distance to its goal$/,
    );
    assert.equal(row.goal, "≤ 10 %");
  });

  test("a row without a goal has no verdict but still shows its A/A", () => {
    const c = pairedRatios([2, 2, 2]);
    const row = judgedRow({ metric: "m", value: "2×", c, aa: aaFrom(0.9, 1.1), style: "times" });
    assert.equal(row.verdict, null);
    assert.equal(row.goal, "");
    assert.match(row.value, /A\/A \(the baseline against itself\): middle half 0\.90–1\.10×$/);
  });

  test("a row printed by another language's program with its per-round ratios is judged by the same rule", () => {
    const row = judgeRawRow({
      metric: "Go client per-call overhead",
      value: "+3.0 % (…)",
      goal: "≤ 5 %",
      ratios: [1.0, 1.02, 1.03, 1.06, 1.08],
      aaRatios: [0.99, 0.995, 1.0, 1.005, 1.01],
      atMost: 1.05,
      aaLabel: "net/http against itself",
    });
    assert.equal(row.verdict, "missed", "the third quartile is +6 %");
    assert.equal(row.goal, "≤ 5 %");
    assert.match(row.value, /; A\/A \(net\/http against itself\): middle half −0\.5 % to \+0\.5 %$/);
    const untouched = { metric: "m", value: "v", goal: "", met: null };
    assert.equal(judgeRawRow(untouched), untouched);
  });
});
