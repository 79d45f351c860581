// The Python client's overhead per call against bare httpx sending the same Authorization header,
// over loopback HTTP. The server (server-process.mjs bare: node:http answering the user JSON) runs in
// its own process pinned to one core with taskset, the Python measurement (python-client.py, in the
// repository's venv) pinned to another, so neither steals the other's CPU. Rounds are paired and
// shuffled; the median ratio counts. Goal from issue 18: ≤ 10 %.
import { spawn, spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "../python/venv.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** `taskset -c <core>` in front of a command when taskset exists and the machine has two cores or more. */
function pinned(core, command, args) {
  const canPin = cpus().length >= 2 && spawnSync("taskset", ["--version"]).status === 0;
  return canPin ? { command: "taskset", args: ["-c", String(core), command, ...args], pinned: true } : { command, args, pinned: false };
}

/** Starts server-process.mjs bare on core 1; resolves with its { url, token } line and the process. */
async function startServer() {
  const { command, args } = pinned(1, process.execPath, [join(here, "server-process.mjs"), "bare"]);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the server exited (${code})`)));
  });
  return { child, ...JSON.parse(line) };
}

export async function pythonClientOverhead() {
  const python = await ensureVenv();
  const server = await startServer();
  try {
    const run = pinned(0, python, [join(here, "python-client.py"), server.url, server.token]);
    const result = spawnSync(run.command, run.args, { encoding: "utf8", maxBuffer: 1 << 20 });
    if (result.status !== 0) throw new Error(`python-client.py: ${result.stderr.trim().split("\n").at(-1)}`);
    const r = JSON.parse(result.stdout);
    const where = `loopback HTTP, ${run.pinned ? "server and client pinned to separate cores" : "not pinned (no taskset)"}, median of ${r.rounds} paired rounds of ${r.calls} calls`;
    return [
      {
        metric: `Python client overhead vs bare httpx sending the same bearer header (${where}, wall time)`,
        value: `${r.wallOverheadPct.toFixed(1)} % (${r.sdkWallUs.toFixed(0)} vs ${r.bareWallUs.toFixed(0)} µs/call)`,
        goal: "≤ 10 %",
        met: r.wallOverheadPct <= 10,
      },
      {
        metric: `Python client overhead vs bare httpx, CPU time of the calling process (same rounds)`,
        value: `${r.cpuOverheadPct.toFixed(1)} % (${r.sdkCpuUs.toFixed(0)} vs ${r.bareCpuUs.toFixed(0)} µs/call)`,
        goal: "",
        met: null,
      },
    ];
  } finally {
    server.child.kill("SIGTERM");
  }
}

// `node tools/bench/python-client.mjs` prints the rows alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await pythonClientOverhead());
