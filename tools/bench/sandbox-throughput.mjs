// Requests per second on GET /api/v1/auth/user: the sandbox against a bare node:http server, each
// in its own process (server-process.mjs; the sandbox as its CLI runs it), both started once on the
// server core, loaded in turn by autocannon in a process of its own on the load core (pinning.mjs),
// in paired rounds of random order after a warm-up of each. The figure is the median over rounds of
// each round's ratio, with the spread of the rounds. Loopback only, bounded in time.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, placement, runJson, shuffled, spawnNode } from "./pinning.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = 5;
const SECONDS = 3;

async function serve(mode) {
  const child = spawnNode("server", [join(here, "server-process.mjs"), mode], { stdio: ["ignore", "pipe", "inherit"] });
  const info = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line));
    });
    child.on("exit", (code) => reject(new Error(`${mode} server exited (${code})`)));
  });
  return { ...info, stop: () => child.kill("SIGTERM") };
}

const load = async ({ url, token }, seconds) => (await runJson([join(here, "load-worker.mjs"), url, token, String(seconds)])).rps;

export async function sandboxThroughput() {
  const servers = { bare: await serve("bare"), sandbox: await serve("sandbox") };
  try {
    // warm-up, so the JIT has compiled both servers' hot paths before anything is counted
    for (const server of Object.values(servers)) await load(server, 2);
    const rps = { bare: [], sandbox: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of shuffled(["bare", "sandbox"])) rps[name].push(await load(servers[name], SECONDS));
    }
    const ratios = rps.sandbox.map((s, i) => s / rps.bare[i]);
    const ratio = median(ratios);
    const pct = (x) => `${(x * 100).toFixed(0)} %`;
    return [
      {
        metric: `sandbox GET /api/v1/auth/user vs bare node:http (autocannon, 32 connections, ${placement}, median of ${ROUNDS} shuffled rounds of ${SECONDS} s)`,
        value: `${Math.round(median(rps.sandbox))} vs ${Math.round(median(rps.bare))} req/s (${pct(ratio)}; rounds from ${pct(Math.min(...ratios))} to ${pct(Math.max(...ratios))})`,
        goal: "≥ 50 % of bare",
        met: ratio >= 0.5,
      },
    ];
  } finally {
    for (const server of Object.values(servers)) server.stop();
  }
}

// `node tools/bench/sandbox-throughput.mjs`: this row alone (build first).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await sandboxThroughput()) console.log(`${row.metric}: ${row.value}`);
}
