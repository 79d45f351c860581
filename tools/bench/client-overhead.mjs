// The client's per-call overhead: tenant client vs bare openapi-fetch vs raw fetch, with a stub
// fetch (pure library cost) and over loopback HTTP (what a caller sees). Rounds are interleaved
// so drift hits every contender alike; the median round counts.
import { createServer } from "node:http";
import createClient from "openapi-fetch";
import { createTenantClient, staticToken } from "@tenant-integration/client";

const BODY = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org" });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function compare(contenders, calls, rounds, warmup) {
  for (const run of Object.values(contenders)) for (let i = 0; i < warmup; i++) await run();
  const times = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(contenders)) {
      const start = performance.now();
      for (let i = 0; i < calls; i++) await run();
      times[name].push(((performance.now() - start) * 1000) / calls);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

function contenders(baseUrl, fetchImpl) {
  const bare = createClient({ baseUrl, fetch: fetchImpl });
  const tenant = createTenantClient({ baseUrl, auth: staticToken("at_bench_token"), fetch: fetchImpl });
  return {
    raw: async () => {
      const response = await fetchImpl(new Request(`${baseUrl}/api/v1/auth/user`, { headers: { Authorization: "Bearer at_bench_token" } }));
      await response.json();
    },
    bare: () => bare.GET("/api/v1/auth/user", { headers: { Authorization: "Bearer at_bench_token" } }),
    tenant: () => tenant.GET("/api/v1/auth/user"),
  };
}

function rows(label, t, goal) {
  const pct = (a, b) => ((a - b) / b) * 100;
  const vsBare = pct(t.tenant, t.bare);
  return [
    { metric: `client overhead vs bare openapi-fetch (${label})`, value: `${vsBare.toFixed(1)} % (${t.tenant.toFixed(2)} vs ${t.bare.toFixed(2)} µs/call)`, goal: goal ? "≤ 10 %" : "", met: goal ? vsBare <= 10 : null },
    { metric: `client overhead vs raw fetch (${label})`, value: `${pct(t.tenant, t.raw).toFixed(1)} % (${t.tenant.toFixed(2)} vs ${t.raw.toFixed(2)} µs/call)`, goal: "", met: null },
  ];
}

export async function clientOverhead() {
  const stub = async () => new Response(BODY, { status: 200, headers: { "content-type": "application/json" } });
  const stubbed = await compare(contenders("https://acme.tenant.test", stub), 20_000, 7, 5_000);

  const server = createServer((req, res) => res.writeHead(200, { "content-type": "application/json" }).end(BODY));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const loopback = await compare(contenders(`http://127.0.0.1:${server.address().port}`, globalThis.fetch), 1_000, 5, 300);
    return [...rows("stub fetch", stubbed, true), ...rows("loopback HTTP", loopback, false)];
  } finally {
    server.closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
  }
}
