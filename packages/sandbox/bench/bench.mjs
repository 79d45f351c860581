// Requests per second of GET /api/v1/auth/user with a valid token, on the real Node server over
// loopback. Bounded: at most TOTAL requests and at most MAX_SECONDS, CONCURRENCY in flight.
// Run `pnpm build` first (turbo's bench task depends on build).
import { startSandbox } from "../dist/index.js";

const TOTAL = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 15);
const WARMUP = 500;

const running = await startSandbox({ clients: [{ id: "bench", redirectUris: ["http://127.0.0.1:1/cb"] }] });
try {
  const { accessToken } = running.sandbox.issueTokens("bench", ["profile:read"]);
  const url = `${running.url}/api/v1/auth/user`;
  const init = { headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" } };

  async function run(count, deadline) {
    let sent = 0;
    let ok = 0;
    let failed = 0;
    async function worker() {
      while (sent < count && performance.now() < deadline) {
        sent += 1;
        const response = await fetch(url, init);
        await response.arrayBuffer();
        if (response.status === 200) ok += 1;
        else failed += 1;
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return { ok, failed };
  }

  await run(WARMUP, performance.now() + 5_000);
  const started = performance.now();
  const { ok, failed } = await run(TOTAL, started + MAX_SECONDS * 1000);
  const seconds = (performance.now() - started) / 1000;
  const rps = Math.round(ok / seconds);
  console.log(`GET /api/v1/auth/user: ${rps} requests/s (${ok} ok, ${failed} failed, ${seconds.toFixed(2)} s, concurrency ${CONCURRENCY}, loopback, Node ${process.version})`);
  if (failed > 0) process.exitCode = 1;
} finally {
  await running.close();
}
