// The arithmetic of every paired comparison in the bench, in one place: the median, quartiles, and a
// comparison of two contenders measured in the same rounds (each round runs both, in a random
// order), reported as the median of the rounds' own ratios (or differences) with their spread; and
// the rule that judges a row against its goal (issue 41):
//
// - a goal is met only when the middle half of the row's paired rounds (first to third quartile)
//   lies on its side of the goal, not when the median alone does;
// - every comparison shows its A/A beside it: the baseline against itself, measured in the same way,
//   interleaved in the same rounds (what the method reports for no difference, on that machine);
// - a row is "noise" when its A/A's middle half is wider than the distance from the row's median
//   to its goal: one more run could put it on either side.
//
// And the quick mode of every piece (`--quick` or BENCH_QUICK=1): fewer rounds and calls, for
// checking that a piece runs, never for figures.

/** True when a piece should run briefly: `--quick` on its command line or BENCH_QUICK=1. */
export const QUICK = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";

/** The `p` quantile (0…1) of `xs`, interpolated between the two nearest values. */
export function quantile(xs, p) {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

export const median = (xs) => quantile(xs, 0.5);

/**
 * Per-round figures of one kind ("ratio", "difference" or "value"): their median, middle half
 * (first to third quartile), range and count, and the figures themselves.
 */
export function spread(values, kind = "value") {
  if (values.length === 0) throw new Error("spread: no rounds");
  return {
    kind,
    median: median(values),
    q1: quantile(values, 0.25),
    q3: quantile(values, 0.75),
    min: Math.min(...values),
    max: Math.max(...values),
    rounds: values.length,
    values: [...values],
  };
}

/**
 * `a` against `b`, measured in the same rounds (`a[i]` and `b[i]` in round i): the median of the
 * per-round ratios a[i]/b[i] (`ratio`), their middle half (`q1`, `q3`) and range, and each
 * contender's median (`a`, `b`). A ratio per round cancels what drifts between rounds (a
 * neighbour's burst, a frequency change), which hits both contenders of a round alike.
 */
export function paired(a, b) {
  if (a.length !== b.length || a.length === 0) throw new Error("paired: both contenders need the same rounds");
  const c = spread(
    a.map((x, i) => x / b[i]),
    "ratio",
  );
  return { ...c, ratio: c.median, a: median(a), b: median(b) };
}

/** Per-round ratios computed elsewhere (a Go or Python program's rounds), summarised as {@link paired} does. */
export function pairedRatios(ratios) {
  const c = spread(ratios, "ratio");
  return { ...c, ratio: c.median };
}

/**
 * `a` less `b`, measured in the same rounds: the median of the per-round differences a[i] − b[i]
 * (`difference`), their middle half and range, and each side's median. For figures whose ratio
 * means little (a cost that may be near zero in a round: what coordination adds, in ms).
 */
export function pairedDifference(a, b) {
  if (a.length !== b.length || a.length === 0) throw new Error("pairedDifference: both sides need the same rounds");
  const c = spread(
    a.map((x, i) => x - b[i]),
    "difference",
  );
  return { ...c, difference: c.median, a: median(a), b: median(b) };
}

/**
 * How far `value` lies from `bound`, and how wide a middle half from `q1` to `q3` is, on the scale
 * of `kind`: ratios as factors (0.91–1.11× is 1.22× wide, 1.03× is 1.07× from a goal of 1.10×,
 * compared by their logarithms, so that "2× from the goal" means the same at 1× and at 8×); other
 * figures in their own unit.
 */
const scale = {
  ratio: { distance: (value, bound) => Math.abs(Math.log(value / bound)), width: (q1, q3) => Math.log(q3 / q1) },
  difference: { distance: (value, bound) => Math.abs(value - bound), width: (q1, q3) => q3 - q1 },
  value: { distance: (value, bound) => Math.abs(value - bound), width: (q1, q3) => q3 - q1 },
};

/**
 * The verdict of the rule on comparison `c` (from {@link paired}, {@link pairedRatios},
 * {@link pairedDifference} or {@link spread}) against `goal` (`{ atMost: x }` or `{ atLeast: x }`,
 * on c's own scale: a ratio, ms, calls/s), with `aa` the A/A comparison from the same rounds:
 *
 * - "noise" when the A/A's middle half is wider than the distance from c's median to the goal;
 * - else "met" when c's whole middle half lies on the goal's side (q3 ≤ atMost, q1 ≥ atLeast);
 * - else "missed".
 *
 * `aa` null: the row is no comparison (a rate or a time against a fixed bound), so no A/A applies
 * and the middle half alone decides. `aa` undefined: a comparison without its A/A; the middle half
 * decides and `aa: "missing"` says the row is not fully judged.
 *
 * @returns {{ verdict: "met" | "missed" | "noise", gap: number, aaWidth?: number, aa: "given" | "none" | "missing" }}
 */
export function judge(c, goal, aa) {
  const atMost = goal.atMost !== undefined;
  const bound = atMost ? goal.atMost : goal.atLeast;
  if (typeof bound !== "number") throw new Error("judge: the goal needs atMost or atLeast");
  const onScale = scale[c.kind];
  const gap = onScale.distance(c.median, bound);
  const met = atMost ? c.q3 <= bound : c.q1 >= bound;
  const verdict = met ? "met" : "missed";
  if (aa === null) return { verdict, gap, aa: "none" };
  if (aa === undefined) return { verdict, gap, aa: "missing" };
  const aaWidth = scale[aa.kind].width(aa.q1, aa.q3);
  return { verdict: aaWidth > gap ? "noise" : verdict, gap, aaWidth, aa: "given" };
}

const signedPct = (ratio) => {
  const pct = (ratio - 1) * 100;
  return `${pct >= 0 ? "+" : "−"}${Math.abs(pct).toFixed(1)} %`;
};
const signedMs = (ms) => `${ms >= 0 ? "+" : "−"}${Math.abs(ms).toFixed(1)}`;

/**
 * How a figure and its spread are printed: "overhead" (+8.1 %), "times" (1.93×), "percent" (74 %),
 * "ms" (a difference: +12.5 ms).
 */
const styles = {
  overhead: { one: signedPct, range: (lo, hi) => `${signedPct(lo)} to ${signedPct(hi)}` },
  times: { one: (r) => `${r.toFixed(2)}×`, range: (lo, hi) => `${lo.toFixed(2)}–${hi.toFixed(2)}×` },
  percent: {
    one: (r) => `${(r * 100).toFixed(0)} %`,
    range: (lo, hi) => `${(lo * 100).toFixed(0)} %–${(hi * 100).toFixed(0)} %`,
  },
  ms: { one: (d) => `${signedMs(d)} ms`, range: (lo, hi) => `${signedMs(lo)} to ${signedMs(hi)} ms` },
};

/** "middle half +5.0 % to +10.2 %, all −1.3 % to +15.0 %": c's spread in `style`. */
export function formatSpread(c, style) {
  const { range } = styles[style];
  return `middle half ${range(c.q1, c.q3)}, all ${range(c.min, c.max)}`;
}

/** "+8.1 % (41 paired rounds: middle half +5.0 % to +10.2 %, all −1.3 % to +15.0 %; medians 27.10 vs 25.10 µs/call)". */
export function formatOverhead(c, unit = "µs/call") {
  return `${signedPct(c.ratio)} (${c.rounds} paired rounds: ${formatSpread(c, "overhead")}; medians ${c.a.toFixed(2)} vs ${c.b.toFixed(2)} ${unit})`;
}

/** "1.93× (11 paired rounds: middle half 1.85–2.01×, all 1.70–2.10×; medians 24.10 vs 12.50 µs)". */
export function formatTimes(c, unit) {
  return `${c.ratio.toFixed(2)}× (${c.rounds} paired rounds: ${formatSpread(c, "times")}; medians ${c.a.toFixed(2)} vs ${c.b.toFixed(2)} ${unit})`;
}

/**
 * "A/A (openapi-fetch against itself): middle half −9.2 % to +11.2 %": the A/A's middle half in
 * `style`, with ", wider than the row's distance to its goal" when that made the row noise.
 */
export function formatAA(aa, style, label, judged) {
  const wider = judged?.verdict === "noise" ? ", wider than the row's distance to its goal" : "";
  return `A/A (${label}): middle half ${styles[style].range(aa.q1, aa.q3)}${wider}`;
}

/**
 * A table row for a comparison measured in paired rounds: `value` (the figure as text) with the A/A
 * beside it, and, when it has a goal, the rule's verdict ({@link judge}). `met` stays for readers of
 * the rows that predate the verdict (true only when "met").
 *
 * @param {object} row
 * @param {string} row.metric
 * @param {string} row.value the figure as text (formatOverhead(c), formatTimes(c, unit)…)
 * @param {object} row.c the comparison the goal is judged on
 * @param {object | null} [row.aa] the A/A from the same rounds; null when the row is no comparison
 * @param {string} [row.aaLabel] who was measured against itself ("openapi-fetch against itself")
 * @param {"overhead" | "times" | "percent" | "ms"} [row.style] how the A/A is printed
 * @param {{ atMost?: number, atLeast?: number }} [row.goal] on c's scale; none: no verdict
 * @param {string} [row.goalText] the goal as the table shows it ("≤ 10 %")
 */
export function judgedRow({ metric, value, c, aa, aaLabel = "the baseline against itself", style, goal, goalText }) {
  const judged = goal ? judge(c, goal, aa) : undefined;
  const aaText = aa ? `; ${formatAA(aa, style ?? "times", aaLabel, judged)}` : "";
  return {
    metric,
    value: `${value}${aaText}`,
    goal: goal ? (goalText ?? "") : "",
    met: judged ? judged.verdict === "met" : null,
    verdict: judged?.verdict ?? null,
    aa: judged?.aa ?? (aa ? "given" : aa === null ? "none" : "missing"),
  };
}

/**
 * A row a program of another language printed as JSON with its per-round figures instead of a
 * verdict: `ratios` (the row's per-round ratios), `aaRatios` (its A/A's, same rounds), `atMost` or
 * `atLeast` (the goal as a ratio), `style` (default "overhead"), `aaLabel`. Returns the row judged
 * by the rule, the A/A beside its value; any other row unchanged.
 */
export function judgeRawRow(row) {
  if (!Array.isArray(row.ratios)) return row;
  const { ratios, aaRatios, atMost, atLeast, style = "overhead", aaLabel, ...rest } = row;
  const goal = atMost !== undefined ? { atMost } : atLeast !== undefined ? { atLeast } : undefined;
  return judgedRow({
    ...rest,
    c: pairedRatios(ratios),
    aa: Array.isArray(aaRatios) ? pairedRatios(aaRatios) : undefined,
    aaLabel,
    style,
    goal,
    goalText: row.goal,
  });
}

/** `xs` in a random order (Fisher–Yates). */
export function shuffled(xs) {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
