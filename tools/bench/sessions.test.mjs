// The rows of a server acting for many users (issues 39, 40): how a release's refreshes are counted
// from the sandbox's ledger (sessions-rows.mjs, for sessions-fleet.mjs), and how memory per session and a
// session's client are judged and shown (sessions-rows.mjs, for sessions-memory.mjs; Go's rows as its program prints them, settled by report.mjs).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { settle, tally, verdictCell } from "./report.mjs";
import { clientRow, memoryRows, refreshesPerFamily } from "./sessions-rows.mjs";

/** A ledger whose family `f<i>` had `counts[i]` answered refreshes (and a refused one where asked). */
const ledger = (counts, { refused = [], reuses = 0 } = {}) => ({
  refreshTokens: counts.flatMap((n, i) =>
    Array.from({ length: n }, (_, j) => ({
      family: `f${i}`,
      presentations: [
        { outcome: "ok" },
        ...(refused.includes(`${i}.${j}`) ? [{ outcome: "reuse-revoked-family" }] : []),
      ],
    })),
  ),
  reuses: Array.from({ length: reuses }, () => ({})),
  families: counts.map((_, i) => ({ id: `f${i}` })),
});

describe("refreshes per session, from the ledger", () => {
  test("every family refreshed once is counted once, none otherwise", () => {
    assert.deepEqual(refreshesPerFamily(ledger([1, 1, 1])), { once: 3, otherwise: 0, reuses: 0 });
  });

  test("a family refreshed twice, and one never, are not counted as refreshed once", () => {
    assert.deepEqual(refreshesPerFamily(ledger([1, 2, 0])), { once: 1, otherwise: 1, reuses: 0 });
  });

  test("a refused presentation is no refresh, and a reuse is reported", () => {
    assert.deepEqual(refreshesPerFamily(ledger([1, 1], { refused: ["0.0"], reuses: 1 })), {
      once: 2,
      otherwise: 0,
      reuses: 1,
    });
  });
});

describe("memory per session", () => {
  test("met only when the middle half of the rounds lies under the goal, with no A/A asked for", () => {
    const [cached, dropped] = memoryRows(
      "TypeScript",
      { cached: [3000, 3100, 3200, 4000, 4200], dropped: [10, 20, 30, 40, 50] },
      4,
      "how",
    );
    // The third quartile, 4000 B, lies under 4 KiB (4096 B).
    assert.equal(verdictCell(cached), "met");
    assert.match(
      cached.value,
      /^3\.13 KiB per session while cached \(median of 5 rounds of 1,000 sessions; middle half 3\.03 KiB–3\.91 KiB/,
    );
    assert.equal(dropped.goal, "");
    assert.equal(verdictCell(dropped), "");
  });

  test("missed when the median lies under the goal but the middle half does not", () => {
    const [cached] = memoryRows(
      "Python",
      { cached: [7000, 7500, 8000, 9000, 9500], dropped: [1, 1, 1, 1, 1] },
      8,
      "how",
    );
    assert.equal(verdictCell(cached), "**missed**");
    assert.equal(tally([cached]).withoutAA.length, 0);
  });
});

describe("a session's client against a manager by hand", () => {
  test("shows the ratio with its A/A beside it, and no verdict (no goal)", () => {
    const times = {
      sessions: [10, 10, 10, 10, 10],
      sessionsAgain: [10, 11, 9, 10, 10],
      byHand: [50, 60, 55, 52, 58],
    };
    const row = clientRow("TypeScript", times, { sessionsCall: "a", byHandCall: "b" });
    assert.match(row.value, /by hand costs 5\.50×/);
    assert.match(row.value, /A\/A \(a second sessions object against the first\): middle half 1\.00–1\.00×$/);
    assert.equal(verdictCell(row), "");
  });

  test("Go's rows are settled by the rule: memory by its middle half, the client row with its A/A", () => {
    const [memory, client] = settle([
      {
        metric: "Go memory per cached session",
        value: "1 KiB",
        goal: "≤ 4 KiB per cached session",
        met: true,
        verdict: "met",
        aa: "none",
      },
      {
        metric: "Go request for a user",
        value: "by hand costs 8.8×",
        goal: "",
        met: null,
        ratios: [8, 8.5, 8.8, 9, 9.2],
        aaRatios: [0.98, 1, 1, 1.01, 1.02],
        style: "times",
        aaLabel: "a second Sessions against the first",
      },
    ]);
    assert.equal(verdictCell(memory), "met");
    assert.equal(tally([memory, client]).withoutAA.length, 0);
    assert.equal(client.value, "by hand costs 8.8×; A/A (a second Sessions against the first): middle half 1.00–1.01×");
    assert.equal(verdictCell(client), "");
  });
});
