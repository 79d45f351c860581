// Serves the sandbox app with the runtime's own server (Deno.serve, Bun.serve), to prove that the
// same Hono app runs outside Node. The client comes from CONFORMANCE_REDIRECT_URI; prints
// `SANDBOX_URL <url>` once listening.
import { createSandbox } from "@tenant-integration/sandbox";

const env = (name) => (globalThis.Deno ? globalThis.Deno.env.get(name) : globalThis.process.env[name]);
const sandbox = createSandbox({
  autoApprove: true,
  testClock: true,
  clients: [{ id: env("CONFORMANCE_CLIENT_ID"), redirectUris: [env("CONFORMANCE_REDIRECT_URI")] }],
});
const announce = (port) => console.log(`SANDBOX_URL http://127.0.0.1:${port}`);

if (globalThis.Deno) {
  globalThis.Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: ({ port }) => announce(port) }, sandbox.fetch);
} else if (globalThis.Bun) {
  announce(globalThis.Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: sandbox.fetch }).port);
} else {
  throw new Error("run me with Deno or Bun");
}
