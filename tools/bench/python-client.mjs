// The Python SDK against bare httpx: the client's overhead per call, sync and async, in-process
// (httpx.MockTransport: what the kit costs) and over loopback HTTP (what a user sees), with the
// token manager against httpx with the header set once (python-client.py says how); and the import
// time of `from tenant_integration import Client, TokenManager` against `import httpx`, and the
// start-up (that import, a token manager and a client) against an httpx.Client, in fresh interpreters.
//
// The loopback server (server-process.mjs bare: node:http answering the user JSON) runs in its own
// process pinned to one core with taskset, the Python measurement (in the repository's venv) pinned to
// the other, so neither steals the other's CPU. Every comparison is paired: both contenders in each
// round, in a shuffled order; a row is the median of the rounds' ratios with their middle half and
// range (stats.mjs); a goal is met when the middle half lies under it. `node python-client.mjs [--quick]`
// prints these rows alone; `--in-process` only the client's in-process rows, `--startup` only the
// import and start-up rows.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "@tenant-integration/python-venv";
import { placement, startServerProcess } from "./pinning.mjs";
import { QUICK, formatOverhead, formatTimes, judgedRow, paired, shuffled } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
/** `--in-process`: the client rows in process alone; `--startup`: the import and start-up rows alone. */
const IN_PROCESS_ONLY = process.argv.includes("--in-process");
const STARTUP_ONLY = process.argv.includes("--startup");
const CLIENT_GOAL_PCT = 10;
const IMPORT_GOAL = 1.2;
const STARTUP_GOAL = 1.1;

/** `taskset -c 0` in front of a command when bench processes are pinned. */
const onLoadCore = (command, args) =>
  placement.includes("taskset") ? ["taskset", ["-c", "0", command, ...args]] : [command, args];

/** How the rows were measured, for BENCHMARKS.md. */
export const pythonMethod = `Client: \`Client(base_url, auth=TokenManager(...))\` (\`AsyncClient\` and \`AsyncTokenManager\` for async), default clock and storage, signed in before timing through an \`httpx.MockTransport\` token endpoint, calling \`get_user()\`; against \`httpx.Client(headers={"Authorization": ...})\` (the header set once, as httpx's README shows) calling \`get\` of the absolute URL, as the kit sends it (httpx's \`base_url=\` with a relative path costs httpx itself about 19.5 %), then \`raise_for_status()\`, \`json()\`. One Python process (\`python-client.py\`) on the load core runs four comparisons: sync and async, in-process (both on an \`httpx.MockTransport\` answering the user JSON) and over loopback (\`server-process.mjs bare\` on the server core). Three contenders: the kit, httpx, and httpx again in a client of its own (A/A: what the method reports for no difference, printed after each row). 300 warm-up calls per contender, then 21 rounds; in each round every contender makes 2,000 (in-process) or 300 (loopback) calls, in 10 (in-process) or 2 (loopback) turns of a new shuffled order each; in-process figures are the process's CPU time (leaving out the time other programs held the core), loopback figures wall time. A row is the median of the rounds' ratios, with their middle half and range, judged by the rule at the top of this file (its A/A beside it). Import: 31 rounds, each running \`from tenant_integration import Client, TokenManager\` (the names a program imports: the package itself loads nothing until a name is used) and \`import httpx\` in fresh interpreters of the repository's venv, in a shuffled order, with \`import httpx\` a second time as the A/A, timed inside the interpreter around the statements in CPU time (user + system: interpreter start-up and the time other programs held the core excluded; bytecode caches written by an untimed first round, as pip writes them at install). Start-up: the same, timing the import plus a \`TokenManager\` and a \`Client\` on it for an https tenant, against \`import httpx\` plus one \`httpx.Client()\`, since an import can defer its work to first use; the kit's clients share one SSL context whose CA bundle is read at the first TLS connection, where httpx reads it for each client it makes. Rerun: \`node tools/bench/python-client.mjs\`.`;

export async function pythonClientOverhead() {
  const python = await ensureVenv();
  if (STARTUP_ONLY) return pythonImport(python);
  const server = await startServerProcess("bare");
  let r;
  try {
    const [command, args] = onLoadCore(python, [
      join(here, "python-client.py"),
      server.url,
      server.token,
      ...(QUICK ? ["--quick"] : []),
      ...(IN_PROCESS_ONLY ? ["--in-process"] : []),
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
    const aa = paired(times.bareAgain, times.bare);
    const where = inProcess ? "in-process: httpx.MockTransport, CPU time" : `loopback HTTP, wall time, ${placement}`;
    const mode = suite.startsWith("async") ? "async" : "sync";
    const calls = r.calls[inProcess ? "in-process" : "loopback"];
    rows.push(
      judgedRow({
        metric: `Python ${mode} client with the token manager vs httpx with the header set once (${where}, ${r.rounds} paired rounds of ${calls} calls)`,
        value: formatOverhead(c),
        c,
        aa,
        aaLabel: "httpx against itself, in a client of its own",
        style: "overhead",
        // Judged by the rule (stats.mjs): met only when the middle half of the rounds lies under the goal.
        goal: inProcess ? { atMost: 1 + CLIENT_GOAL_PCT / 100 } : undefined,
        goalText: `≤ ${CLIENT_GOAL_PCT} %`,
      }),
    );
  }
  if (!IN_PROCESS_ONLY) rows.push(...(await pythonImport(python)));
  return rows;
}

/**
 * `import tenant_integration` against `import httpx`, each in a fresh interpreter, interleaved; and,
 * since an import may defer work to first use, the import plus a first client made (no request).
 */
async function pythonImport(python) {
  // Bytecode caches written (as pip writes them at install), even where the environment says not to:
  // otherwise every module changed since the last write is compiled again in every round.
  const { PYTHONDONTWRITEBYTECODE: _, ...env } = process.env;
  const timeSnippet = (snippet) => {
    // The interpreter's CPU time (user + system, file reads included): the time other programs held the core is left out.
    const code = `import time\nstart = time.process_time()\n${snippet}\nprint((time.process_time() - start) * 1e3)`;
    const [command, args] = onLoadCore(python, ["-c", code]);
    const result = spawnSync(command, args, { encoding: "utf8", env });
    if (result.status !== 0) throw new Error(`${snippet}: ${result.stderr.trim().split("\n").at(-1)}`);
    return Number(result.stdout.trim());
  };
  const compare = (label, kit, peer, goal) => {
    // peerAgain: the peer's snippet again, the A/A beside the row.
    const snippets = { kit, peer, peerAgain: peer };
    for (const snippet of Object.values(snippets)) timeSnippet(snippet); // untimed: bytecode caches written, files in the page cache
    const times = { kit: [], peer: [], peerAgain: [] };
    const rounds = QUICK ? 5 : 31;
    for (let i = 0; i < rounds; i++)
      for (const name of shuffled(Object.keys(snippets))) times[name].push(timeSnippet(snippets[name]));
    const c = paired(times.kit, times.peer);
    return judgedRow({
      metric: `Python ${label} (fresh interpreters, ${rounds} interleaved rounds, CPU time inside the interpreter)`,
      value: formatTimes(c, "ms"),
      c,
      aa: paired(times.peerAgain, times.peer),
      aaLabel: "httpx's snippet against itself",
      style: "times",
      goal: goal ? { atMost: goal } : undefined,
      goalText: `≤ ${goal}×`,
    });
  };
  const tenant = "https://acme.tenant.test";
  const manager = `TokenManager("${tenant}", "demo", "http://127.0.0.1:53682/callback", ["profile:read"])`;
  return [
    compare(
      "import: `from tenant_integration import Client, TokenManager` vs `import httpx`",
      "from tenant_integration import Client, TokenManager",
      "import httpx",
      IMPORT_GOAL,
    ),
    compare(
      "start-up (no request): the import, a `TokenManager` and a `Client` on it vs `import httpx` and an `httpx.Client()`",
      `from tenant_integration import Client, TokenManager\nmanager = ${manager}\nClient(base_url="${tenant}", auth=manager).close()\nmanager.close()`,
      "import httpx\nhttpx.Client().close()",
      STARTUP_GOAL,
    ),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await pythonClientOverhead())
    console.log(`${row.metric}: ${row.value}${row.goal ? ` (goal ${row.goal}: ${row.verdict})` : ""}`);
}
