// One contender of client-overhead.mjs, in a worker thread of its own (overhead-run.mjs starts one
// per contender): a worker is a V8 isolate of its own, so no other contender's JIT state, inline
// caches or garbage share its heap (issue 20: contenders run one after the other in one isolate
// printed +25.6 % where the true figure was +3.6 %), while the contenders still take turns within
// one process, milliseconds apart, so what disturbs one round disturbs both sides of its pairs.
// workerData: { contender, mode: "stub" | "loopback", url }. It sets its contender up, makes one
// call that must succeed, posts { ready: true }; then each message { calls } runs that many calls one
// after the other and posts { usPerCall, cpuUsPerCall }: wall time, and the process's CPU time (user
// + system; the other contenders' workers are idle meanwhile, waiting for their turn).
//
// The contenders and their fair setups: client-contenders.mjs.
import { parentPort, workerData } from "node:worker_threads";
import { contenderFor, stubFetch } from "./client-contenders.mjs";

const { contender, mode, url } = workerData;
const fetchImpl = mode === "stub" ? stubFetch : globalThis.fetch;

const run = await contenderFor(contender, url, fetchImpl);
if (run === undefined) throw new Error(`unknown contender ${contender}`);
// Every contender must succeed: a failing call is cheap and would flatter its figure.
const first = await run();
if (first?.error) throw new Error(`${contender}: the call failed: ${JSON.stringify(first.error)}`);
parentPort.on("message", async ({ calls }) => {
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < calls; i++) await run();
  const cpu = process.cpuUsage(cpuStart);
  parentPort.postMessage({
    usPerCall: ((performance.now() - start) * 1000) / calls,
    cpuUsPerCall: (cpu.user + cpu.system) / calls,
  });
});
parentPort.postMessage({ ready: true });
