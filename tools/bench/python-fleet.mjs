// 20 Python processes sharing one token file, released together after the access token expired:
// the wall time until every one holds a token and has read the user (one of them refreshes, the
// others wait on the file lock and read the new tokens), next to one Python process alone doing the
// same refresh on its own file; with the refreshes the sandbox counted per expiry (goal: 1). Real
// processes (packages/python/tests/processes/worker.py, the SDK from the repository's venv with a
// FileStorage), the sandbox tenant on loopback.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ACCESS_TOKEN_LIFETIME_SECONDS, startSandbox } from "@tenant-integration/sandbox";
import { ensureVenv } from "../python/venv.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const WORKER = join(here, "..", "..", "packages", "python", "tests", "processes", "worker.py");
const FLEET = 20;
const ROUNDS = 5;
const CLIENT_ID = "bench-python-fleet";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One worker.py process; `next()` resolves with its next JSON line. */
function startWorker(python, env) {
  const child = spawn(python, [WORKER], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  const queue = [];
  const waiting = [];
  let stderr = "";
  child.stdin.on("error", () => {}); // written to after it exited: nothing to do
  child.stderr.on("data", (chunk) => (stderr += chunk));
  createInterface({ input: child.stdout }).on("line", (line) => (waiting.length ? waiting.shift().resolve(JSON.parse(line)) : queue.push(JSON.parse(line))));
  child.once("exit", (code) => waiting.splice(0).forEach((w) => w.reject(new Error(`worker.py exited (${code}): ${stderr.trim().split("\n").at(-1)}`))));
  return {
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((resolve, reject) => waiting.push({ resolve, reject }))),
    send: (command) => child.stdin.write(`${JSON.stringify(command)}\n`),
    exited: new Promise((resolve) => child.once("exit", resolve)),
    kill: () => child.kill("SIGKILL"),
  };
}

async function ready(worker) {
  const message = await worker.next();
  if (!message.ready) throw new Error(`worker.py did not get ready: ${JSON.stringify(message)}`);
}

export async function pythonFleet() {
  const metric = `${FLEET} Python processes sharing one token file all hold a token after expiry`;
  const python = await ensureVenv();
  const tenant = await startSandbox({ port: 0, host: "127.0.0.1", clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], autoApprove: true, testClock: true });
  const dir = mkdtempSync(join(tmpdir(), "python-fleet-"));
  const workers = [];
  try {
    /** `size` warmed-up workers on `file`: the first signs in through the sandbox's auto-approve, then the others start. */
    const fleetOf = async (size, file) => {
      const env = { STORAGE: "file", TOKEN_FILE: file, TENANT_URL: tenant.url, CLIENT_ID, REDIRECT_URI, CLOCK_OFFSET_MS: String(tenant.sandbox.clock.offsetSeconds * 1000) };
      const first = startWorker(python, { ...env, SIGN_IN: "1" });
      workers.push(first);
      await ready(first);
      const rest = Array.from({ length: size - 1 }, () => startWorker(python, env));
      workers.push(...rest);
      for (const w of rest) await ready(w);
      return [first, ...rest];
    };
    const many = await fleetOf(FLEET, join(dir, "many", "tokens.json"));
    const one = await fleetOf(1, join(dir, "one", "tokens.json"));

    const walls = { many: [], one: [] };
    const refreshCounts = [];
    for (let round = 0; round < ROUNDS; round++) {
      tenant.sandbox.clock.advance(ACCESS_TOKEN_LIFETIME_SECONDS + 1);
      const offsetMs = tenant.sandbox.clock.offsetSeconds * 1000;
      for (const [name, members] of [["many", many], ["one", one]]) {
        const before = tenant.sandbox.events().at(-1)?.seq ?? 0;
        const start = performance.now();
        for (const w of members) w.send({ go: Math.round(offsetMs) });
        const results = (await Promise.all(members.map((w) => w.next()))).map((m) => m.result);
        walls[name].push(performance.now() - start);
        const failed = results.find((r) => !r.ok);
        if (failed) throw new Error(`a process of the ${name} fleet did not get a token: ${JSON.stringify(failed)}`);
        if (name === "many") refreshCounts.push(tenant.sandbox.events().filter((e) => e.seq > before && e.grantType === "refresh_token").length);
      }
    }
    return [
      {
        metric,
        value: `${median(walls.many).toFixed(0)} ms wall (median of ${ROUNDS}; refreshes per expiry: ${refreshCounts.join(", ")}); one Python process alone: ${median(walls.one).toFixed(0)} ms`,
        goal: "1 refresh per expiry",
        met: refreshCounts.every((n) => n === 1),
      },
    ];
  } finally {
    for (const w of workers) w.send({ exit: true });
    const timer = setTimeout(() => workers.forEach((w) => w.kill()), 10_000);
    await Promise.all(workers.map((w) => w.exited));
    clearTimeout(timer);
    await tenant.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// `node tools/bench/python-fleet.mjs` prints the row alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await pythonFleet());
