// Entry for Node, Bun and Deno: reads the sandbox from the environment, runs the flow, prints the
// results and exits 1 when any check failed.
import { report, runConformance } from "./flow.mjs";
import { httpDriver } from "./http-driver.mjs";

const env = (name) => {
  const value = globalThis.Deno ? globalThis.Deno.env.get(name) : globalThis.process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const runtime = env("CONFORMANCE_RUNTIME");
const baseUrl = env("CONFORMANCE_SANDBOX_URL");
const results = await runConformance({
  baseUrl,
  clientId: env("CONFORMANCE_CLIENT_ID"),
  redirectUri: env("CONFORMANCE_REDIRECT_URI"),
  driver: httpDriver(baseUrl),
});
console.log(report(runtime, results));
console.log(`CONFORMANCE_RESULT ${JSON.stringify(results)}`);
const failed = results.some((r) => !r.ok);
if (globalThis.Deno) globalThis.Deno.exit(failed ? 1 : 0);
else globalThis.process.exit(failed ? 1 : 0);
