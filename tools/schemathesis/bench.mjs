// The longer Schemathesis run, as rows of `pnpm bench`'s table (tools/bench/bench.mjs).
import { PROFILES, runSchemathesis } from "./run.mjs";

/** Runs the long profile against a fresh sandbox; one row: test cases generated and failures found. */
export async function schemathesisLongRun() {
  const { seed, maxExamples } = PROFILES.long;
  const started = performance.now();
  const result = await runSchemathesis(PROFILES.long, { echo: false });
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  return [
    {
      metric: `Schemathesis against the sandbox (seed ${seed}, ${maxExamples} examples per operation and phase, all checks, stateful)`,
      value: `${result.generated} test cases, ${result.failures} failures (${seconds} s)`,
      goal: "0 failures",
      met: result.status === 0 && result.failures === 0,
      // a count: exact, no spread (tools/bench/report.mjs)
      exact: true,
    },
  ];
}
