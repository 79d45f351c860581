// The Python SDK against bare httpx: the client's overhead per call, sync and async, in-process
// (httpx.MockTransport: what the kit costs) and over loopback HTTP (what a user sees), with the
// token manager against httpx with the header set once (python-client.py says how); and the import
// time of `import tenant_integration` against `import httpx`, in fresh interpreters.
//
// The loopback server (server-process.mjs bare: node:http answering the user JSON) runs in its own
// process pinned to one core with taskset, the Python measurement (in the repository's venv) pinned to
// the other, so neither steals the other's CPU. Every comparison is paired: both contenders in each
// round, in a shuffled order; a row is the median of the rounds' ratios with their middle half and
// range (stats.mjs). `node python-client.mjs [--quick]` prints these rows alone.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "@tenant-integration/python-venv";
import { placement, startServerProcess } from "./pinning.mjs";
import { QUICK, formatOverhead, formatTimes, paired, shuffled } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CLIENT_GOAL_PCT = 10;
const IMPORT_GOAL = 1.2;

/** `taskset -c 0` in front of a command when bench processes are pinned. */
const onLoadCore = (command, args) =>
  placement.includes("taskset") ? ["taskset", ["-c", "0", command, ...args]] : [command, args];

/** How the rows were measured, for BENCHMARKS.md. */
export const pythonMethod = `Client: \`Client(base_url, auth=TokenManager(...))\` (\`AsyncClient\` and \`AsyncTokenManager\` for async), default clock and storage, signed in before timing through an \`httpx.MockTransport\` token endpoint, calling \`get_user()\`; against \`httpx.Client(base_url, headers={"Authorization": ...})\` (the header set once, as httpx's README shows), calling \`get\`, \`raise_for_status()\`, \`json()\`. One Python process (\`python-client.py\`) on the load core runs four comparisons: sync and async, in-process (both on an \`httpx.MockTransport\` answering the user JSON) and over loopback (\`server-process.mjs bare\` on the server core). 300 warm-up calls per contender, then 21 rounds; in each round both contenders make 2,000 (in-process) or 300 (loopback) calls one after the other, in a shuffled order; a row is the median of the rounds' ratios, with their middle half and range. Import: 31 rounds, each running \`import tenant_integration\` and \`import httpx\` in fresh interpreters of the repository's venv, in a shuffled order, timed inside the interpreter around the import statement (interpreter start-up excluded; bytecode caches warm after an untimed first round); a second row times the import plus a first client made, \`Client(base_url=...)\` against \`httpx.Client(base_url=...)\`, since an import can defer its work to first use. Rerun: \`node tools/bench/python-client.mjs\`.`;

export async function pythonClientOverhead() {
  const python = await ensureVenv();
  const server = await startServerProcess("bare");
  let r;
  try {
    const [command, args] = onLoadCore(python, [
      join(here, "python-client.py"),
      server.url,
      server.token,
      ...(QUICK ? ["--quick"] : []),
    ]);
    const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 1 << 24 });
    if (result.status !== 0) throw new Error(`python-client.py: ${result.stderr.trim().split("\n").at(-1)}`);
    r = JSON.parse(result.stdout);
  } finally {
    server.stop();
  }
  const rows = [];
  for (const [suite, times] of Object.entries(r.results)) {
    const inProcess = suite.includes("in-process");
    const c = paired(times.sdk, times.bare);
    const where = inProcess ? "in-process: httpx.MockTransport" : `loopback HTTP, wall time, ${placement}`;
    const mode = suite.startsWith("async") ? "async" : "sync";
    rows.push({
      metric: `Python ${mode} client with the token manager vs httpx with the header set once (${where}, ${r.rounds} paired rounds of ${r.calls[inProcess ? "in-process" : "loopback"]} calls)`,
      value: formatOverhead(c),
      goal: inProcess ? `≤ ${CLIENT_GOAL_PCT} %` : "",
      met: inProcess ? (c.ratio - 1) * 100 <= CLIENT_GOAL_PCT : null,
    });
  }
  rows.push(...(await pythonImport(python)));
  return rows;
}

/**
 * `import tenant_integration` against `import httpx`, each in a fresh interpreter, interleaved; and,
 * since an import may defer work to first use, the import plus a first client made (no request).
 */
async function pythonImport(python) {
  const timeSnippet = (snippet) => {
    const code = `import time\nstart = time.perf_counter()\n${snippet}\nprint((time.perf_counter() - start) * 1e3)`;
    const [command, args] = onLoadCore(python, ["-c", code]);
    const result = spawnSync(command, args, { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`${snippet}: ${result.stderr.trim().split("\n").at(-1)}`);
    return Number(result.stdout.trim());
  };
  const compare = (label, kit, peer, goal) => {
    const snippets = { kit, peer };
    for (const snippet of Object.values(snippets)) timeSnippet(snippet); // untimed: bytecode caches written, files in the page cache
    const times = { kit: [], peer: [] };
    const rounds = QUICK ? 5 : 31;
    for (let i = 0; i < rounds; i++)
      for (const name of shuffled(["kit", "peer"])) times[name].push(timeSnippet(snippets[name]));
    const c = paired(times.kit, times.peer);
    return {
      metric: `Python ${label} (fresh interpreters, ${rounds} interleaved rounds, timed inside the interpreter)`,
      value: formatTimes(c, "ms"),
      goal: goal ? `≤ ${goal}×` : "",
      met: goal ? c.ratio <= goal : null,
    };
  };
  return [
    compare(
      "import: `import tenant_integration` vs `import httpx`",
      "import tenant_integration",
      "import httpx",
      IMPORT_GOAL,
    ),
    compare(
      "import and a first client (no request): `Client(base_url=...)` vs `httpx.Client(base_url=...)`",
      `from tenant_integration import Client\nClient(base_url="https://acme.tenant.test").close()`,
      `import httpx\nhttpx.Client(base_url="https://acme.tenant.test").close()`,
      null,
    ),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await pythonClientOverhead())
    console.log(`${row.metric}: ${row.value}${row.goal ? ` (goal ${row.goal}: ${row.met ? "met" : "MISSED"})` : ""}`);
}
