// The site's "Conformance" page: the matrix of the conformance suite's last recorded run
// (tools/conformance/results/last-run.json, written by `pnpm conformance`) and how to run it. It is
// added to the reader's copy of the contract as a trait tag (a sidebar section with no operations):
// the matrix is a fact about the kit, not about the service, so it never enters the contract.

/**
 * The targets a result's `mix` names, in the order the grid's columns show them, with their labels.
 * A target the data holds that is not listed here (a new kit's) gets a column of its own after these,
 * labelled with its name; the mixed fleet comes last.
 */
const TARGETS = [
  { mix: "node", label: "TypeScript (Node)" },
  { mix: "browser", label: "TypeScript (tabs)" },
  { mix: "python", label: "Python" },
  { mix: "python-async", label: "Python async" },
  { mix: "go", label: "Go" },
  { mix: "java", label: "Java" },
];
const MIXED = { mix: "mixed", label: "mixed fleet" };

/** The storages, in the order the grid's rows list them; others the data holds follow. */
const STORAGES = ["memory", "file", "redis", "redis-cluster", "postgres", "web"];

/** `known` in its order, then what `found` holds besides, in the order found. */
const ordered = (known, found) => [
  ...known.filter((item) => found.includes(item)),
  ...found.filter((item) => !known.includes(item)),
];

const escapeHtml = (text) =>
  String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The columns of the grid: each target found in the results, then the mixed fleet. */
export function gridTargets(results) {
  const found = [...new Set(results.map((result) => result.mix))];
  const known = TARGETS.map((target) => target.mix);
  const targets = ordered(
    known,
    found.filter((mix) => mix !== MIXED.mix),
  ).map((mix) => TARGETS.find((target) => target.mix === mix) ?? { mix, label: mix });
  return found.includes(MIXED.mix) ? [...targets, MIXED] : targets;
}

/**
 * One cell: the runs of a target for a scenario on a storage, passed out of run; "–" when none ran,
 * titled with why when the target's actor lacks a feature the scenario needs (`notRun`).
 */
function cell(own, target, notRun) {
  const label = ` data-label="${escapeHtml(target.label)}"`;
  if (own.length === 0) {
    const why = notRun ? `not run: ${notRun.why}` : "not run on this storage";
    return `<td class="none"${label} title="${escapeHtml(why)}">–</td>`;
  }
  const passed = own.filter((result) => result.passed).length;
  const runtimes = [...new Set(own.flatMap((result) => result.runtimes ?? []))].join(", ");
  const what = `${target.label}: ${passed} of ${own.length} runs passed${runtimes ? ` (${runtimes})` : ""}`;
  const state = passed === own.length ? "pass" : "fail";
  const mark = passed === own.length ? "✓" : "✗";
  return `<td class="${state}"${label} title="${escapeHtml(what)}">${mark} ${passed}/${own.length}</td>`;
}

/**
 * The grid of the run: a row per scenario and storage it ran on (the scenario named once for its
 * rows), a column per target and one for the mixed fleet, then the refreshes the tenant answered
 * against the expiries of the row's runs, and the worst wait of any call. Targets, storages and
 * scenarios come from the results, so a new one takes its place without a change here.
 */
export function conformanceGrid(report) {
  const targets = gridTargets(report.results);
  const scenarios = [...new Set(report.results.map((result) => result.scenario))];
  const head = ["scenario", "storage", ...targets.map((target) => target.label), "refreshes / expiries", "worst wait"]
    .map((name) => `<th scope="col">${escapeHtml(name)}</th>`)
    .join("");
  const rows = [];
  for (const scenario of scenarios) {
    const mine = report.results.filter((result) => result.scenario === scenario);
    const storages = ordered(STORAGES, [...new Set(mine.map((result) => result.storage))]);
    storages.forEach((storage, i) => {
      const own = mine.filter((result) => result.storage === storage);
      const refreshes = own.reduce((sum, result) => sum + (result.refreshes ?? 0), 0);
      const expiries = own.reduce((sum, result) => sum + result.expiries, 0);
      const worst = Math.max(...own.map((result) => result.worstWaitMs));
      const summary = report.scenarios?.[scenario];
      const title = summary ? ` title="${escapeHtml(summary)}"` : "";
      const name =
        i === 0
          ? `<th scope="rowgroup" rowspan="${storages.length}"${title}><code>${escapeHtml(scenario)}</code></th>`
          : "";
      const cells = targets.map((target) =>
        cell(
          own.filter((result) => result.mix === target.mix),
          target,
          (report.notRun ?? []).find((entry) => entry.scenario === scenario && entry.targets.includes(target.mix)),
        ),
      );
      rows.push(
        `<tr${i === 0 ? ' class="first"' : ""}>${name}<td class="storage" data-label="storage">${escapeHtml(storage)}</td>` +
          `${cells.join("")}<td class="number" data-label="refreshes / expiries">${refreshes} / ${expiries}</td>` +
          `<td class="number" data-label="worst wait">${worst} ms</td></tr>`,
      );
    });
  }
  return (
    `<div class="conformance-grid"><table><thead><tr>${head}</tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table></div>`
  );
}

/**
 * The page's Markdown: what the suite proves, the grid of the last run (scenario × storage × target,
 * {@link conformanceGrid}), and how to run it.
 *
 * @param {{ date: string, geometry: string, redis: string | null, runtimes: string[], passed: number, failed: number,
 *   results: { scenario: string, storage: string, mix: string, passed: boolean, refreshes?: number, expiries: number, worstWaitMs: number, failures: string[] }[],
 *   scenarios: Record<string, string> }} report with each scenario's summary, by name
 */
export function conformancePage(report) {
  const failures = report.results.filter((result) => !result.passed);
  const geometry =
    report.geometry === "full"
      ? "the documented defaults (a 10 s stale bound and lease, 13 s pauses, fleets of 100 processes)"
      : "the reduced geometry of every test run (a 2 s stale bound and lease, 3 s pauses, fleets of 6 processes)";
  return [
    "The kit's first promise is that once signed in, an integration stays signed in: in one tab or many,",
    "one process or a hundred, in TypeScript, Python, Go or Java or all of them at once, through pauses, kills,",
    "throttling, outages and restarts. The **conformance suite** states that promise as scenarios (`spec/conformance/` in the",
    "repository) that every target of the kit must pass against one sandbox tenant. Each scenario runs on",
    "each storage it names, for each target alone and for a fleet mixing every target that can share that",
    "storage. Every actor is a real process (or a real Chromium tab) using only its kit's public API.",
    "",
    "After every run the suite checks, from the sandbox's refresh-token ledger and from what the actors said:",
    "no refresh token presented twice (*single redemption*), no session ended that nothing should have ended,",
    "a fresh process continuing the session from the storage, every call answered within its bound, one",
    "refresh per expiry (per session, for a server acting for many users, none of whose sessions may be",
    "answered with another user's account), and no token or code in any log line at the most verbose level",
    "(token files 0600 in a 0700 directory).",
    "",
    `### The last recorded run`,
    "",
    `${report.date.slice(0, 10)}, at ${geometry}: **${report.passed} runs passed, ${report.failed} failed**.`,
    `Runtimes: ${report.runtimes.join(", ")}${report.redis ? `; redis-server ${report.redis}` : ""}.`,
    "A row is a scenario on one storage; a column is a target alone (its kit's actors only) or the mixed",
    "fleet (the targets that can share that storage, together). A cell counts the runs that passed (one",
    "per parameter, e.g. each pause point), – where the target does not run on that storage; refreshes /",
    "expiries add up the refreshes the tenant answered against the expiries of all the row's runs, and the",
    "worst wait is the longest any call of the row waited.",
    "",
    conformanceGrid(report),
    "",
    ...(report.notRun?.length
      ? [
          "Not run (their actors do not declare a feature the scenario needs):",
          "",
          ...report.notRun.map((entry) => `- \`${entry.scenario}\` on ${entry.targets.join(", ")}: ${entry.why}.`),
          "",
        ]
      : []),
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
