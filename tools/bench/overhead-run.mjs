// The rounds of client-overhead.mjs in one process (on the load core, pinning.mjs):
// `node overhead-run.mjs <stub|loopback> <url> <rounds> <calls> <warmup> <contender>...` starts one
// worker thread per contender (overhead-worker.mjs: an isolate of its own), warms each up with
// <warmup> calls, then runs <rounds> rounds: in each, every contender in a new random order makes
// <calls> calls while the others wait. Prints one JSON line: each contender's µs/call per round.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { shuffled } from "./stats.mjs";

const [mode, url, roundsArg, callsArg, warmupArg, ...contenders] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));

/** A started contender: `run(calls)` resolves its µs/call over that many calls. */
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
      return (await answer).usPerCall;
    },
    stop: () => worker.terminate(),
  };
}

const workers = {};
for (const contender of contenders) workers[contender] = await start(contender);
try {
  for (const contender of contenders) await workers[contender].run(Number(warmupArg));
  const times = Object.fromEntries(contenders.map((contender) => [contender, []]));
  for (let r = 0; r < Number(roundsArg); r++) {
    for (const contender of shuffled(contenders)) times[contender].push(await workers[contender].run(Number(callsArg)));
  }
  console.log(JSON.stringify(times));
} finally {
  await Promise.all(Object.values(workers).map((worker) => worker.stop()));
}
