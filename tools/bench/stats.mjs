// The arithmetic of every paired comparison in the bench, in one place: the median, quartiles, and a
// comparison of two contenders measured in the same rounds (each round runs both, in a random
// order), reported as the median of the rounds' own ratios with their spread. And the quick mode of
// every piece (`--quick` or BENCH_QUICK=1): fewer rounds and calls, for checking that a piece runs,
// never for figures.

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
 * `a` against `b`, measured in the same rounds (`a[i]` and `b[i]` in round i): the median of the
 * per-round ratios a[i]/b[i], their middle half (first to third quartile) and their range, and each
 * contender's median. A ratio per round cancels what drifts between rounds (a neighbour's burst,
 * a frequency change), which hits both contenders of a round alike.
 */
export function paired(a, b) {
  if (a.length !== b.length || a.length === 0) throw new Error("paired: both contenders need the same rounds");
  const ratios = a.map((x, i) => x / b[i]);
  return {
    ratio: median(ratios),
    q1: quantile(ratios, 0.25),
    q3: quantile(ratios, 0.75),
    min: Math.min(...ratios),
    max: Math.max(...ratios),
    a: median(a),
    b: median(b),
    rounds: ratios.length,
  };
}

const signed = (ratio) => {
  const pct = (ratio - 1) * 100;
  return `${pct >= 0 ? "+" : "−"}${Math.abs(pct).toFixed(1)} %`;
};

/** "+8.1 % (rounds: middle half +5.0 to +10.2 %, all −1.3 to +15.0 %; medians 27.1 vs 25.1 µs)". */
export function formatOverhead(c, unit = "µs/call") {
  const range = (lo, hi) => `${signed(lo)} to ${signed(hi)}`;
  return `${signed(c.ratio)} (${c.rounds} paired rounds: middle half ${range(c.q1, c.q3)}, all ${range(c.min, c.max)}; medians ${c.a.toFixed(2)} vs ${c.b.toFixed(2)} ${unit})`;
}

/** "1.93× (… paired rounds: middle half 1.85–2.01×, all 1.70–2.10×; medians 24.1 vs 12.5 µs)". */
export function formatTimes(c, unit) {
  const x = (r) => r.toFixed(2);
  return `${x(c.ratio)}× (${c.rounds} paired rounds: middle half ${x(c.q1)}–${x(c.q3)}×, all ${x(c.min)}–${x(c.max)}×; medians ${c.a.toFixed(2)} vs ${c.b.toFixed(2)} ${unit})`;
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
