import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/** The bundled contract every tool reads. */
export const BUNDLE_PATH = require.resolve("@tenant-integration/openapi/openapi.json");
const PRISM = fileURLToPath(new URL("../../node_modules/.bin/prism", import.meta.url));

/** A free loopback port, chosen by the OS at run time. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RunningPrism {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts `prism proxy <bundle> <upstream> --errors` on a free port and waits until it listens. */
export async function startPrismProxy(upstream: string): Promise<RunningPrism> {
  const port = await freePort();
  const child: ChildProcess = spawn(PRISM, ["proxy", BUNDLE_PATH, upstream, "--errors", "-p", String(port), "-h", "127.0.0.1"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  await new Promise<void>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`prism did not start within 20 s:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes("Prism is listening")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`prism exited with ${String(code)}:\n${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, stop };
}
