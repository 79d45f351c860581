// The site's "Conformance" page: the matrix of the conformance suite's last recorded run
// (tools/conformance/results/last-run.json, written by `pnpm conformance`) and how to run it. It is
// added to the reader's copy of the contract as a trait tag (a sidebar section with no operations):
// the matrix is a fact about the kit, not about the service, so it never enters the contract.

/** The targets, and the mixed fleet, in the order a row lists them. */
const MIXES = [
  { mix: "node", label: "TypeScript" },
  { mix: "browser", label: "TypeScript tabs" },
  { mix: "python", label: "Python" },
  { mix: "python-async", label: "Python async" },
  { mix: "go", label: "Go" },
  { mix: "mixed", label: "mixed" },
];

/** "TypeScript ✓ 4/4, Python **✗ 3/4**, …": the runs of each target that passed (one cell, so the table fits the page). */
const targets = (results) =>
  MIXES.flatMap(({ mix, label }) => {
    const own = results.filter((result) => result.mix === mix);
    if (own.length === 0) return [];
    const passed = own.filter((result) => result.passed).length;
    return [passed === own.length ? `${label} ✓ ${passed}/${own.length}` : `${label} **✗ ${passed}/${own.length}**`];
  }).join(", ");

/**
 * The page's Markdown: what the suite proves, the matrix (scenario × storage × target), and how to
 * run it.
 *
 * @param {{ date: string, geometry: string, redis: string | null, runtimes: string[], passed: number, failed: number,
 *   results: { scenario: string, storage: string, mix: string, passed: boolean, refreshes?: number, expiries: number, worstWaitMs: number, failures: string[] }[],
 *   scenarios: Record<string, string> }} report with each scenario's summary, by name
 */
export function conformancePage(report) {
  const rows = [];
  const keys = [...new Set(report.results.map((result) => `${result.scenario}\u0000${result.storage}`))];
  for (const key of keys) {
    const [scenario, storage] = key.split("\u0000");
    const own = report.results.filter((result) => result.scenario === scenario && result.storage === storage);
    const refreshes = own.reduce((sum, result) => sum + (result.refreshes ?? 0), 0);
    const expiries = own.reduce((sum, result) => sum + result.expiries, 0);
    const worst = Math.max(...own.map((result) => result.worstWaitMs));
    rows.push(`| \`${scenario}\` | ${storage} | ${targets(own)} | ${refreshes} / ${expiries} | ${worst} ms |`);
  }
  const failures = report.results.filter((result) => !result.passed);
  const geometry =
    report.geometry === "full"
      ? "the documented defaults (a 10 s stale bound and lease, 13 s pauses, fleets of 100 processes)"
      : "the reduced geometry of every test run (a 2 s stale bound and lease, 3 s pauses, fleets of 6 processes)";
  return [
    "The kit's first promise is that once signed in, an integration stays signed in: in one tab or many,",
    "one process or a hundred, in TypeScript or Python or both at once, through pauses, kills, throttling",
    "and restarts. The **conformance suite** states that promise as scenarios (`spec/conformance/` in the",
    "repository) that every target of the kit must pass against one sandbox tenant. Each scenario runs on",
    "each storage it names, for each target alone and for a fleet mixing every target that can share that",
    "storage. Every actor is a real process (or a real Chromium tab) using only its kit's public API.",
    "",
    "After every run the suite checks, from the sandbox's refresh-token ledger and from what the actors said:",
    "no refresh token presented twice (*single redemption*), no session ended that nothing should have ended,",
    "a fresh process continuing the session from the storage, every call answered within its bound, one",
    "refresh per expiry, and no token or code in any log line at the most verbose level (token files 0600",
    "in a 0700 directory).",
    "",
    `### The last recorded run`,
    "",
    `${report.date.slice(0, 10)}, at ${geometry}: **${report.passed} runs passed, ${report.failed} failed**.`,
    `Runtimes: ${report.runtimes.join(", ")}${report.redis ? `; redis-server ${report.redis}` : ""}.`,
    "A row counts, for each target alone and for the mixed fleet, the runs that passed (one per parameter,",
    "e.g. each pause point); refreshes / expiries add up the refreshes the tenant answered against the",
    "expiries of all the row's runs.",
    "",
    "| scenario | storage | runs passed | refreshes / expiries | worst wait |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    ...(failures.length > 0
      ? [
          "Failed runs:",
          "",
          ...failures.map(
            (result) =>
              `- \`${result.scenario}\` on ${result.storage} (${result.mix}): ${result.failures[0]?.split("\n")[0] ?? ""}`,
          ),
          "",
        ]
      : []),
    "### The scenarios",
    "",
    ...Object.entries(report.scenarios).map(([name, summary]) => `- \`${name}\`: ${summary}`),
    "",
    "### Running it",
    "",
    "From a clone of the repository: `pnpm test` runs every scenario at the reduced geometry and fails when",
    "a step or an invariant fails; `pnpm conformance` runs the matrix from the command line, a line per run",
    "(`--full` at the documented defaults; `--scenario`, `--storage` and `--mix` choose runs), and records",
    "it for this page. A new target joins by shipping one actor that speaks the suite's line protocol",
    "(`spec/conformance/PROTOCOL.md`).",
  ].join("\n");
}

/**
 * A copy of `contract` with the "Conformance" trait tag last among its tags.
 *
 * @param {object} contract the bundled contract (a reader's copy)
 * @param {object} report tools/conformance/results/last-run.json
 */
export function withConformance(contract, report) {
  const tag = {
    name: "Conformance",
    "x-displayName": "Conformance",
    "x-traitTag": true,
    description: conformancePage(report),
  };
  return { ...contract, tags: [...(contract.tags ?? []), tag] };
}
