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
// Fair setups (tools/bench/README.md, "Fair baselines"): the kit as its README shows it, the token
// manager as `auth` with its default clock and storage, signed in once before the clock starts (its
// token endpoint is a stub: the sign-in is not measured); openapi-fetch as its README shows it, the
// bearer header set once on the client (`createClient({ headers })`), not merged into every call.
import { parentPort, workerData } from "node:worker_threads";
import createClient from "openapi-fetch";
import { createTenantClient, staticToken, timeoutAfter } from "@tenant-integration/client";
import { createTokenManager } from "@tenant-integration/token-manager";

const { contender, mode, url } = workerData;
const TOKEN = "at_bench_token";
const BODY = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org" });
// a 1 KB JSON body for the POST contenders
const TICKET = { subject: "Printer on fire", detail: "x".repeat(960) };
const HEADERS = { Authorization: `Bearer ${TOKEN}` };
const REDIRECT = "http://127.0.0.1:53682/callback";

const fetchImpl =
  mode === "stub"
    ? async () => new Response(BODY, { status: 200, headers: { "content-type": "application/json" } })
    : globalThis.fetch;

/** The token manager as the client's README shows it (default clock and storage), signed in. */
async function signedInManager() {
  const tokenEndpoint = async () =>
    new Response(
      JSON.stringify({ access_token: TOKEN, refresh_token: "rt_bench", token_type: "Bearer", expires_in: 900 }),
      {
        status: 200,
        headers: { "content-type": "application/json" },
      },
    );
  const manager = createTokenManager({
    baseUrl: url,
    clientId: "bench",
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    fetch: tokenEndpoint,
  });
  const { url: authorizeUrl } = await manager.beginAuthorization();
  const state = new URL(authorizeUrl).searchParams.get("state");
  await manager.completeAuthorization(`${REDIRECT}?code=bench&state=${state}`);
  return manager;
}

const bareClient = () => createClient({ baseUrl: url, fetch: fetchImpl, headers: HEADERS });
const tenantClient = async (options = {}) =>
  createTenantClient({ baseUrl: url, auth: await signedInManager(), fetch: fetchImpl, ...options });

/** The contender this process runs, set up (only it). */
async function contenderFor(name) {
  switch (name) {
    case "raw":
      return async () => {
        const response = await fetchImpl(new Request(`${url}/api/v1/auth/user`, { headers: HEADERS }));
        await response.json();
      };
    // the same contender twice (A/A): what the method reports for no difference at all
    case "bare":
    case "bareAgain": {
      const client = bareClient();
      return () => client.GET("/api/v1/auth/user");
    }
    // the same client, the header set per request by a middleware instead of once: what openapi-fetch's
    // middleware mechanism costs by itself, before anything the kit's own middleware does
    case "bareMiddleware": {
      const client = createClient({ baseUrl: url, fetch: fetchImpl });
      client.use({
        onRequest({ request }) {
          request.headers.set("Authorization", HEADERS.Authorization);
          return request;
        },
      });
      return () => client.GET("/api/v1/auth/user");
    }
    // the same client plus what a timeout costs by itself: a timer and a signal per call
    case "bareTimeout": {
      const client = bareClient();
      return () => client.GET("/api/v1/auth/user", { signal: AbortSignal.timeout(30_000) });
    }
    case "barePost": {
      const client = bareClient();
      return () => client.POST("/api/v1/tickets", { body: TICKET });
    }
    case "tenant": {
      const client = await tenantClient();
      return () => client.GET("/api/v1/auth/user");
    }
    // a token from elsewhere: what the client costs without the token manager
    case "tenantStatic": {
      const client = createTenantClient({ baseUrl: url, auth: staticToken(TOKEN), fetch: fetchImpl });
      return () => client.GET("/api/v1/auth/user");
    }
    case "tenantTimeout": {
      const client = await tenantClient({ timeout: timeoutAfter(30_000) });
      return () => client.GET("/api/v1/auth/user");
    }
    case "tenantPost": {
      const client = await tenantClient();
      return () => client.POST("/api/v1/tickets", { body: TICKET });
    }
    default:
      return undefined;
  }
}

const run = await contenderFor(contender);
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
