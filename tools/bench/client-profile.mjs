// By hand, not in the table: where one in-process call of the TypeScript client goes (issue 41,
// point 1). `node client-profile.mjs [tenant|static|bare] [calls]` (after `pnpm build`) makes the
// calls of client-overhead.mjs's in-process contender (`tenant`: the client with the token manager;
// `static`: the client on `staticToken`; `bare`: openapi-fetch with the header set once; a stub fetch
// answering a 3-field user JSON) under V8's CPU profiler (node:inspector), after a warm-up, and
// prints the share of the samples spent in each group of code (the client, the token manager,
// openapi-fetch, undici's Request/Response/Headers, web streams, the rest of Node, GC and native
// code); the same samples charged to the nearest caller of one of the first four groups (or this
// script's: the stub fetch of client-contenders.mjs, which sets the contenders up), so that undici's work for the client (the header it sets) counts as the
// client's; then the functions with the most samples of their own. Run it for `tenant` and `bare` one
// after the other and compare shares, not times: a profile says where the time goes, and the
// paired rounds of client-overhead.mjs say how much the client costs.
import { Session } from "node:inspector/promises";
import { contenderFor, stubFetch } from "./client-contenders.mjs";

const [contender = "tenant", callsArg = "100000"] = process.argv.slice(2);
/** This script's contenders, as client-overhead.mjs names them (client-contenders.mjs sets them up). */
const CONTENDERS = { tenant: "tenant", static: "tenantStatic", bare: "bare" };

/** The group a profile node's code belongs to. */
function groupOf({ url: file, functionName }) {
  if (file.includes("/packages/client/")) return "client";
  if (file.includes("/packages/token-manager/") || file.includes("/packages/internal/"))
    return "token manager (and internal)";
  if (file.includes("openapi-fetch")) return "openapi-fetch";
  if (file.includes("undici")) return "undici (Request, Response, Headers)";
  if (file.includes("webstreams")) return "web streams (bodies)";
  if (file.startsWith("node:")) return "the rest of Node";
  if (functionName === "(garbage collector)") return "garbage collector";
  return file === "" ? "native and V8" : "this script";
}

/** Samples per key, as shares of all samples, most first. */
function shares(counts, total) {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${((100 * n) / total).toFixed(1).padStart(5)} %  ${key}`);
}

if (!Object.hasOwn(CONTENDERS, contender)) throw new Error(`unknown contender ${contender}: tenant, static or bare`);
const call = await contenderFor(CONTENDERS[contender], "https://acme.tenant.test", stubFetch);
const first = await call();
if (first.error || !first.data) throw new Error(`${contender}: the call failed`);
for (let i = 0; i < 20_000; i++) await call();

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 });
await session.post("Profiler.start");
const calls = Number(callsArg);
const cpu = process.cpuUsage();
for (let i = 0; i < calls; i++) await call();
const used = process.cpuUsage(cpu);
const { profile } = await session.post("Profiler.stop");
session.disconnect();

const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
const parents = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id])));
const CALLERS = ["client", "token manager (and internal)", "openapi-fetch", "this script"];
/** The group of the nearest frame, from the sample's own up, of code that calls into the runtime. */
function callerOf(id) {
  for (let at = id; at !== undefined; at = parents.get(at)) {
    const group = groupOf(nodes.get(at));
    if (CALLERS.includes(group)) return group;
  }
  return "the runtime on its own (microtasks, GC)";
}
const groups = new Map();
const callers = new Map();
const functions = new Map();
for (const id of profile.samples) {
  const frame = nodes.get(id);
  const group = groupOf(frame);
  const caller = callerOf(id);
  callers.set(caller, (callers.get(caller) ?? 0) + 1);
  const where = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").at(-1)}:${frame.lineNumber + 1}`;
  groups.set(group, (groups.get(group) ?? 0) + 1);
  functions.set(`${where} [${group}]`, (functions.get(`${where} [${group}]`) ?? 0) + 1);
}
const total = profile.samples.length;
console.log(
  `${contender}: ${calls} calls, ${((used.user + used.system) / calls).toFixed(2)} µs of CPU per call (profiler on), ${total} samples`,
);
console.log("\nby group (self time):");
for (const line of shares(groups, total)) console.log(`  ${line}`);
console.log("\nby caller (self time charged to the nearest client, token manager, openapi-fetch or script frame):");
for (const line of shares(callers, total)) console.log(`  ${line}`);
console.log("\nfunctions with the most self time:");
for (const line of shares(functions, total).slice(0, 25)) console.log(`  ${line}`);
