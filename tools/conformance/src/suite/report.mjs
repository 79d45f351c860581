// The matrix of a run of the suite, as JSON (for machines and the docs site) and as a Markdown table.

/**
 * @param {object[]} results from runScenario
 * @param {{ geometry: string, redis?: string, postgres?: string, missing: { name: string, why: string }[], scenarios?: object[],
 *   notRun?: { scenario: string, targets: string[], why: string }[] }} context
 *   `scenarios`: those the results come from, whose summaries the report carries; `notRun`: the
 *   targets left out of a scenario because their actor lacks a feature it needs (scenarios.mjs, notRun)
 */
export function matrix(results, context) {
  const runtimes = [...new Set(results.flatMap((result) => result.runtimes))].sort();
  return {
    date: new Date().toISOString(),
    geometry: context.geometry,
    redis: context.redis ?? null,
    postgres: context.postgres ?? null,
    runtimes,
    leftOut: context.missing,
    notRun: context.notRun ?? [],
    scenarios: Object.fromEntries((context.scenarios ?? []).map((scenario) => [scenario.name, scenario.summary])),
    passed: results.filter((result) => result.passed).length,
    failed: results.filter((result) => !result.passed).length,
    results,
  };
}

const cell = (text) => String(text).replace(/\|/g, "\\|");

/** The matrix as Markdown: one row per run. */
export function markdown(report) {
  const lines = [
    `Conformance run of ${report.date.slice(0, 10)}, ${report.geometry} geometry: ${report.passed} passed, ${report.failed} failed.`,
    "",
    `Runtimes: ${report.runtimes.join(", ") || "none"}${report.redis ? `; redis-server ${report.redis}` : ""}${report.postgres ? `; PostgreSQL ${report.postgres}` : ""}.`,
    ...(report.leftOut.length
      ? ["", `Left out: ${report.leftOut.map((m) => `${m.name} (${m.why})`).join("; ")}.`]
      : []),
    ...(report.notRun?.length
      ? ["", `Not run: ${report.notRun.map((n) => `${n.scenario} on ${n.targets.join(", ")} (${n.why})`).join("; ")}.`]
      : []),
    "",
    "| scenario | storage | actors | parameters | result | refreshes / expiries | worst wait |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const result of report.results) {
    const params =
      Object.entries(result.params)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ") || "–";
    const outcome = result.passed ? "pass" : `**fail**: ${cell(result.failures[0] ?? "")}`.slice(0, 400);
    lines.push(
      `| ${result.scenario} | ${result.storage} | ${result.actors} ${result.mix} | ${params} | ${outcome} | ${result.refreshes ?? "?"} / ${result.expiries} | ${result.worstWaitMs} ms |`,
    );
  }
  return `${lines.join("\n")}\n`;
}
