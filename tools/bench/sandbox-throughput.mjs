// Requests per second on GET /api/v1/auth/user: the sandbox against a bare node:http server, each
// in its own process, measured by autocannon in this process, one after the other in the same run,
// each after a 2 s warm-up. The sandbox runs as its CLI runs it (see server-process.mjs).
// Loopback only, bounded in time.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

const here = dirname(fileURLToPath(import.meta.url));
const DURATION_S = 5;

async function serve(mode) {
  const child = spawn(process.execPath, [join(here, "server-process.mjs"), mode], { stdio: ["ignore", "pipe", "inherit"] });
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

async function load({ url, token }) {
  const options = { url: `${url}/api/v1/auth/user`, headers: { authorization: `Bearer ${token}` }, connections: 32 };
  // Warm-up first, so the JIT has compiled both servers' hot paths before anything is counted.
  await autocannon({ ...options, duration: 2 });
  const result = await autocannon({ ...options, duration: DURATION_S });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.average;
}

export async function sandboxThroughput() {
  const bare = await serve("bare");
  const bareRps = await load(bare).finally(bare.stop);
  const sandbox = await serve("sandbox");
  const sandboxRps = await load(sandbox).finally(sandbox.stop);
  const ratio = sandboxRps / bareRps;
  return [
    {
      metric: "sandbox GET /api/v1/auth/user vs bare node:http (autocannon, 32 connections)",
      value: `${Math.round(sandboxRps)} vs ${Math.round(bareRps)} req/s (${(ratio * 100).toFixed(0)} %)`,
      goal: "≥ 50 % of bare",
      met: ratio >= 0.5,
    },
  ];
}
