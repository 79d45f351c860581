// The report of `pnpm bench`: every row in one table, each goal's verdict by the rule of stats.mjs
// (met, missed, noise), the counts, and BENCHMARKS.md around them. A row is
//
//   { metric, value, goal, met, verdict?, aa?, exact?, failed? }
//
// - `verdict` ("met" | "missed" | "noise") and `aa` ("given" | "none" | "missing"): a row made by
//   stats.mjs `judgedRow` (or `judgeRawRow`, for a program of another language that printed its
//   per-round ratios);
// - `met` (true, false, null) alone: a row that predates the rule. With `exact: true` it is a count
//   or a size, one measurement with no spread (bytes, refreshes, failures), and `met` is its
//   verdict; without, it is a timed figure judged without an A/A, and the table says so;
// - `failed`: the row could not be measured; the run fails after the table is written.
import { judgeRawRow } from "./stats.mjs";

/** The rule, as BENCHMARKS.md states it at the top. */
export const RULE = `**How a goal is judged.** A timed comparison is measured in paired rounds: the contenders run in
the same rounds, in a new random order each round, and a row gives the median of the rounds' own
ratios (or differences), their middle half (first to third quartile) and their range. A goal is
**met** only when the whole middle half lies on its side of the goal, not when the median alone
does. Beside every ratio is its **A/A**: the baseline against itself, measured in the same way,
interleaved in the same rounds, which shows what the method reports for no difference on that
machine. A row is **noise** when its A/A's middle half is wider than the distance from the row's
median to its goal (ratios compared as factors: an A/A of 0.91–1.11× is 1.22× wide, a row at 1.03×
is 1.07× from a goal of 1.10×): one more run could put it on either side, so it is neither met nor
missed. A figure that is no comparison (a rate, one build's time) is judged by its middle half
alone; sizes and counts are exact. A verdict marked "(no A/A)" comes from a piece that does not
measure its A/A yet.`;

const VERDICTS = { met: "met", missed: "**missed**", noise: "*noise*" };

/** Every row settled: rows printed with per-round ratios (another language's program) judged by the rule. */
export const settle = (rows) => rows.map(judgeRawRow);

/** The table's last cell: the verdict, "(no A/A)" where a timed comparison was judged without one. */
export function verdictCell(row) {
  if (row.verdict) return `${VERDICTS[row.verdict]}${row.aa === "missing" ? " (no A/A)" : ""}`;
  if (row.met === null || row.met === undefined) return "";
  return `${row.met ? "met" : "**missed**"}${row.exact || row.failed ? "" : " (no A/A)"}`;
}

/** What the verdicts add up to: counts, and the goal rows judged without an A/A. */
export function tally(rows) {
  const withGoal = rows.filter((r) => !r.failed && (r.verdict || (r.met !== null && r.met !== undefined)));
  const outcome = (r) => r.verdict ?? (r.met ? "met" : "missed");
  const count = (v) => withGoal.filter((r) => outcome(r) === v).length;
  return {
    met: count("met"),
    missed: count("missed"),
    noise: count("noise"),
    failed: rows.filter((r) => r.failed),
    withoutAA: withGoal.filter((r) => verdictCell(r).endsWith("(no A/A)")),
  };
}

/** "metric: value (goal ≤ 10 %: noise)": a row as a piece run alone prints it. */
export function rowLine(row) {
  const verdict = verdictCell(row).replace(/\*/g, "");
  return `${row.metric}: ${row.value}${row.goal ? ` (goal ${row.goal}${verdict ? `: ${verdict}` : ""})` : ""}`;
}

const cell = (s) => String(s).replace(/\|/g, "\\|");

/** The rows as a Markdown table. */
export function markdownTable(rows) {
  return [
    "| metric | value | goal | |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${cell(r.metric)} | ${cell(r.value)} | ${cell(r.goal)} | ${verdictCell(r)} |`),
  ].join("\n");
}

/** One line: how many figures, goals met, missed, noise, failed, and judged without an A/A. */
export function summary(rows) {
  const t = tally(rows);
  const without = t.withoutAA.length ? `, ${t.withoutAA.length} judged without an A/A` : "";
  return `${rows.length} figures; goals: ${t.met} met, ${t.missed} missed, ${t.noise} noise${without}; rows failed: ${t.failed.length}.`;
}

/** BENCHMARKS.md: the rule, the machine, the date, the table and how each row was measured. */
export function benchmarksMarkdown({ machine, date, rows, methods }) {
  return `# Benchmarks

Written by \`pnpm bench\` (tools/bench). Each figure is measured on the machine below; goals come from
the project's issues. Load generators, servers and browsers share the machine.

${RULE}

Every comparison is fair by rule (tools/bench/README.md, "Fair baselines"): the kit as its README
shows it (the token manager, the default clock) against each peer as its own README shows it (the
header set once on the client); every peer app in the size comparison signs in to the sandbox,
serves concurrent calls after expiry with one refresh and revokes at sign-out before its bytes count.
A wide range says the machine was busy, not that the code changed: compare two runs made on an idle
machine. How each row was measured (contenders, setup, rounds, spread) and the command that reruns
it are under the table.

- Machine: ${machine}
- Date: ${date}

${markdownTable(rows)}

## How each row was measured

${methods.join("\n")}`;
}
