// Starts Prism (mock or proxy) on a free loopback port and stops it, process group and all.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** The bundled contract file that Prism serves. */
export const bundlePath = require.resolve("@tenant-integration/openapi/openapi.yaml");

/** A free TCP port on 127.0.0.1, found by binding port 0. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface RunningPrism {
  url: string;
  /** Everything Prism printed, for failure messages. */
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts `prism mock <bundle>` or `prism proxy <bundle> <upstream> --errors` and resolves once it
 * answers HTTP. Rejects (and kills Prism) when it exits or does not answer within `timeoutMs`.
 */
export async function startPrism(options: { upstream?: string; timeoutMs?: number } = {}): Promise<RunningPrism> {
  const port = await freePort();
  const prismBin = join(dirname(require.resolve("@stoplight/prism-cli/package.json")), "dist", "index.js");
  const args = options.upstream
    ? ["proxy", bundlePath, options.upstream, "--errors", "-p", String(port), "-h", "127.0.0.1"]
    : ["mock", bundlePath, "-p", String(port), "-h", "127.0.0.1"];
  const child: ChildProcess = spawn(process.execPath, [prismBin, ...args], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    }, 3000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Prism exited early:\n${log}`);
    if (/listening on/i.test(log)) {
      try {
        await fetch(`${url}/__prism_ready_probe`, { redirect: "manual" });
        return { url, output: () => log, stop };
      } catch {
        /* not yet */
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`Prism did not start within ${options.timeoutMs ?? 20_000} ms:\n${log}`);
}

/** The violations Prism reported for a request or response, parsed from `sl-violations`. */
export function violations(response: Response): Array<{ location: string[]; code: string | number; message: string }> {
  const header = response.headers.get("sl-violations");
  return header ? JSON.parse(header) : [];
}
