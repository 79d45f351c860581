// The load generator of sandbox-throughput.mjs, in its own process on the load core:
// `node load-worker.mjs <url> <token> <seconds> [<rate>]` runs autocannon (32 connections) on
// GET <url>/api/v1/auth/user with the bearer token, as fast as the server answers or at <rate>
// requests per second over all connections, and prints { rps, total } as one JSON line.
import autocannon from "autocannon";

const [url, token, seconds, rate] = process.argv.slice(2);
const result = await autocannon({
  url: `${url}/api/v1/auth/user`,
  headers: { authorization: `Bearer ${token}` },
  connections: 32,
  duration: Number(seconds),
  ...(rate ? { overallRate: Number(rate) } : {}),
});
if (result.non2xx > 0 || result.errors > 0) {
  console.error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  process.exit(1);
}
console.log(JSON.stringify({ rps: result.requests.average, total: result.requests.total }));
