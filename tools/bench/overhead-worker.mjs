// One contender of client-overhead.mjs, alone in its process (so no other contender's JIT state or
// garbage shares its heap): `node overhead-worker.mjs <contender> <stub|loopback> <url> <calls> <warmup>`.
// Warms up, runs <calls> calls one after the other in batches, and prints the median batch's
// { usPerCall } as one JSON line: wall time, with the stub fetch (the library's own cost; the process
// is alone on its core) and over loopback HTTP.
import createClient from "openapi-fetch";
import { createTenantClient, staticToken, timeoutAfter } from "@tenant-integration/client";

const [contender, mode, url, callsArg, warmupArg] = process.argv.slice(2);
const calls = Number(callsArg);
const warmup = Number(warmupArg);
const BODY = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org" });
// a 1 KB JSON body for the POST contenders
const TICKET = { subject: "Printer on fire", detail: "x".repeat(960) };
const HEADER = { Authorization: "Bearer at_bench_token" };

const fetchImpl = mode === "stub" ? async () => new Response(BODY, { status: 200, headers: { "content-type": "application/json" } }) : globalThis.fetch;
const bare = createClient({ baseUrl: url, fetch: fetchImpl });
const tenant = createTenantClient({ baseUrl: url, auth: staticToken("at_bench_token"), fetch: fetchImpl });
const tenantTimeout = createTenantClient({ baseUrl: url, auth: staticToken("at_bench_token"), fetch: fetchImpl, timeout: timeoutAfter(30_000) });

const contenders = {
  raw: async () => {
    const response = await fetchImpl(new Request(`${url}/api/v1/auth/user`, { headers: HEADER }));
    await response.json();
  },
  bare: () => bare.GET("/api/v1/auth/user", { headers: HEADER }),
  bareNoHeader: () => bare.GET("/api/v1/auth/user"),
  // the same header plus what a timeout costs by itself: a timer and a signal
  bareTimeout: () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 30_000);
    return bare.GET("/api/v1/auth/user", { headers: HEADER, signal: controller.signal }).finally(() => clearTimeout(timer));
  },
  tenant: () => tenant.GET("/api/v1/auth/user"),
  tenantTimeout: () => tenantTimeout.GET("/api/v1/auth/user"),
  barePost: () => bare.POST("/api/v1/tickets", { headers: HEADER, body: TICKET }),
  tenantPost: () => tenant.POST("/api/v1/tickets", { body: TICKET }),
};

const run = contenders[contender];
if (run === undefined) {
  console.error(`unknown contender ${contender}`);
  process.exit(2);
}
// Wall time: the CPU time the kernel accounts moves in ticks (4 ms at 250 Hz), too coarse for a batch.
const clock = () => performance.now() * 1000;
for (let i = 0; i < warmup; i++) await run();
// The calls run in batches, and the figure is the median batch: a garbage collection, a compilation
// on a background thread or a neighbour's burst lands in one batch or two, not in the figure.
const BATCHES = 15;
const perBatch = Math.max(1, Math.round(calls / BATCHES));
const batches = [];
for (let b = 0; b < BATCHES; b++) {
  const start = clock();
  for (let i = 0; i < perBatch; i++) await run();
  batches.push((clock() - start) / perBatch);
}
batches.sort((a, b) => a - b);
console.log(JSON.stringify({ usPerCall: batches[Math.floor(BATCHES / 2)] }));
