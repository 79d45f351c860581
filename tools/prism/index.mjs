// Prism for contract tests: `prism mock <bundle>` or `prism proxy <bundle> <upstream> --errors`, on a
// free loopback port chosen at run time, in its own process group so that stopping it also stops
// the workers it forks.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const prismEntry = join(dirname(require.resolve("@stoplight/prism-cli/package.json")), "dist", "index.js");

/** A free TCP port on 127.0.0.1, found by binding port 0. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts Prism and resolves once it answers HTTP; kills it and rejects when it exits or times out. */
export async function startPrism({ bundle, upstream, timeoutMs = 30_000 }) {
  const port = await freePort();
  const args = upstream
    ? ["proxy", bundle, upstream, "--errors", "-p", String(port), "-h", "127.0.0.1"]
    : ["mock", bundle, "-p", String(port), "-h", "127.0.0.1"];
  const child = spawn(process.execPath, [prismEntry, ...args], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (chunk) => (log += chunk));
  child.stderr.on("data", (chunk) => (log += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const signal = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      /* already gone */
    }
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Prism exited early:\n${log}`);
    if (/listening on/i.test(log)) {
      try {
        await fetch(`${url}/__prism_ready_probe`, { redirect: "manual" });
        return { url, output: () => log, stop };
      } catch {
        /* not answering yet */
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`Prism did not start within ${timeoutMs} ms:\n${log}`);
}

/** The violations Prism reported for a request or response, parsed from its `sl-violations` header. */
export function violations(response) {
  const header = response.headers.get("sl-violations");
  return header ? JSON.parse(header) : [];
}
