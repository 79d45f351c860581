// Clean build (turbo with --force: every task runs, nothing from the cache) and cached rebuild
// (nothing changed: every task from the cache), timed as a user would run them.
import { spawnSync } from "node:child_process";
import { judgedRow, spread } from "./stats.mjs";

function timed(root, args) {
  const start = performance.now();
  const result = spawnSync("pnpm", ["turbo", "run", "build", ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
  });
  if (result.status !== 0) throw new Error(`turbo build failed:\n${result.stdout}\n${result.stderr}`);
  return { seconds: (performance.now() - start) / 1000, output: result.stdout };
}

/** Cached rebuilds timed: enough for a middle half, few enough to stay short. */
const CACHED_ROUNDS = 5;

export async function buildTimes(root) {
  const clean = timed(root, ["--force"]);
  const cached = Array.from({ length: CACHED_ROUNDS }, () => timed(root, []));
  const full = cached.every((run) => /FULL TURBO/.test(run.output));
  const seconds = spread(cached.map((run) => run.seconds));
  return [
    { metric: "clean build (turbo run build --force)", value: `${clean.seconds.toFixed(1)} s`, goal: "", met: null },
    // A time against a fixed bound, not a comparison: no A/A applies; the middle half must lie under it
    judgedRow({
      metric: "cached rebuild (turbo run build, nothing changed)",
      value: `${seconds.median.toFixed(2)} s${full ? " (FULL TURBO)" : ""} (median of ${CACHED_ROUNDS} runs; middle half ${seconds.q1.toFixed(2)}–${seconds.q3.toFixed(2)} s, all ${seconds.min.toFixed(2)}–${seconds.max.toFixed(2)} s)`,
      c: seconds,
      aa: null,
      goal: { atMost: 3 },
      goalText: "≤ 3 s",
    }),
  ];
}

/** How the rows were measured, for BENCHMARKS.md. */
export const buildTimesMethod = `\`pnpm turbo run build --force\` (clean: every task runs, nothing from the cache), once, then \`pnpm turbo run build\` (cached: nothing changed) ${CACHED_ROUNDS} times, wall time from the command's start to its exit, as a user runs them; the cached row is the median run with its middle half and range (a time against a fixed bound, not a comparison: no A/A; the goal of 3 s is met when the middle half lies under it). Rerun: \`pnpm turbo run build --force && pnpm turbo run build\` at the root, timed.`;
