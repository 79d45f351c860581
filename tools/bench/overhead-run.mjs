// The rounds of client-overhead.mjs in one process (on the load core, pinning.mjs):
// `node overhead-run.mjs <stub|loopback> <url> <rounds> <calls> <warmup> <turns> <isolates> <contender>...`
// starts <isolates> worker threads per contender (overhead-worker.mjs: each an isolate of its own),
// warms each up with <warmup> calls, then runs <rounds> rounds. A round is <turns> turns; in each
// turn every worker, in a new random order, makes its share of the contender's <calls> calls while
// the others wait, so the contenders of a round take turns every few milliseconds and a neighbour's
// burst or a frequency change lands on all of them alike. A contender's figure for the round is the
// mean over its workers and turns: two isolates running the same code settle on different machine
// code (inlining, object layouts), a few per cent apart for the whole run, so one isolate per
// contender would read that as a difference between contenders (issue 28).
// Prints one JSON line: for each clock (`wall`: elapsed time; `cpu`: the process's CPU time, user +
// system, which leaves out the time other programs held the core), each contender's µs/call per round.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { shuffled } from "./stats.mjs";

const [mode, url, roundsArg, callsArg, warmupArg, turnsArg, isolatesArg, ...contenders] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));

/** A started worker of `contender`: `run(calls)` resolves its { usPerCall, cpuUsPerCall } over that many calls. */
async function start(contender) {
  const worker = new Worker(join(here, "overhead-worker.mjs"), { workerData: { contender, mode, url } });
  let pending;
  let failed;
  worker.on("message", (message) => pending?.resolve(message));
  worker.on("error", (error) => {
    failed = error;
    pending?.reject(error);
  });
  const next = () =>
    new Promise((resolve, reject) => {
      if (failed) reject(failed);
      else pending = { resolve, reject };
    });
  await next(); // { ready: true }
  return {
    async run(calls) {
      const answer = next();
      worker.postMessage({ calls });
      return answer;
    },
    stop: () => worker.terminate(),
  };
}

const turns = Number(turnsArg);
const isolates = Number(isolatesArg);
const callsPerTurn = Math.max(1, Math.round(Number(callsArg) / turns / isolates));
/** Every worker, with the contender it runs. */
const workers = [];
for (const contender of contenders) {
  for (let i = 0; i < isolates; i++) workers.push({ contender, worker: await start(contender) });
}
try {
  for (const { worker } of workers) await worker.run(Number(warmupArg));
  const times = { wall: {}, cpu: {} };
  for (const contender of contenders) times.wall[contender] = [];
  for (const contender of contenders) times.cpu[contender] = [];
  const shares = turns * isolates;
  for (let r = 0; r < Number(roundsArg); r++) {
    const wall = Object.fromEntries(contenders.map((contender) => [contender, 0]));
    const cpu = { ...wall };
    for (let turn = 0; turn < turns; turn++) {
      for (const { contender, worker } of shuffled(workers)) {
        const { usPerCall, cpuUsPerCall } = await worker.run(callsPerTurn);
        wall[contender] += usPerCall / shares;
        cpu[contender] += cpuUsPerCall / shares;
      }
    }
    for (const contender of contenders) {
      times.wall[contender].push(wall[contender]);
      times.cpu[contender].push(cpu[contender]);
    }
  }
  console.log(JSON.stringify(times));
} finally {
  await Promise.all(workers.map(({ worker }) => worker.stop()));
}
