/**
 * Test helpers for the multi-process tests: the sandbox as a real server process, and worker
 * processes (file-worker.mjs) that use the built package as a command-line tool would.
 * Not part of the package (excluded from the build).
 *
 * The sandbox is started from its built CLI by path, not imported: the sandbox's own tests depend on
 * this package, so a dependency back would be a cycle in the workspace graph. turbo.json of this
 * package makes its test tasks depend on `@tenant-integration/sandbox#build` instead.
 */
import { fileURLToPath } from "node:url";
import { type Child, startJsonLines, startReady } from "@tenant-integration/test-support/processes";

const SANDBOX_CLI = fileURLToPath(new URL("../../../sandbox/dist/cli.js", import.meta.url));
const WORKER = fileURLToPath(new URL("./file-worker.mjs", import.meta.url));

export type { Child, Message } from "@tenant-integration/test-support/processes";

/** Past the access token's 15 minutes. */
const LATER_SECONDS = 901;

/** The sandbox, as a process on a free loopback port with the test clock, and auto-approve unless told otherwise. */
export interface SandboxProcess {
  readonly url: string;
  /** How far its clock has moved, in ms: it moves forward only, and workers' clocks follow it by this offset. */
  readonly offsetMs: number;
  /** Moves its clock forward. */
  advance(seconds: number): Promise<void>;
  /** Moves its clock past the access token's lifetime. */
  expire(): Promise<void>;
  /** Its token and revoke events (`GET /__sandbox/events`). */
  events(): Promise<{ seq: number; grantType?: string; outcome: string; detail?: string }[]>;
  /** The `seq` of its last event (0 without any): what {@link refreshesSince} counts from. */
  lastSeq(): Promise<number>;
  /** Its refresh_token grants since `seq`: `"ok"`, or the error code and its detail. */
  refreshesSince(seq: number): Promise<string[]>;
  close(): Promise<void>;
}

export async function startSandboxProcess(
  clientId: string,
  redirectUri: string,
  { autoApprove = true } = {},
): Promise<SandboxProcess> {
  const approve = autoApprove ? ["--auto-approve"] : [];
  const proc = startJsonLines([
    SANDBOX_CLI,
    "--port",
    "0",
    ...approve,
    "--test-clock",
    "--json",
    "--client",
    `id=${clientId},redirect=${redirectUri}`,
  ]);
  const { url } = (await proc.next()) as { url: string };
  let offsetMs = 0;
  const sandbox: SandboxProcess = {
    url,
    get offsetMs() {
      return offsetMs;
    },
    async advance(seconds) {
      const response = await fetch(`${url}/__sandbox/clock`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ advanceSeconds: seconds }),
      });
      if (!response.ok) throw new Error(`clock: ${response.status}`);
      offsetMs += seconds * 1000;
    },
    expire: () => sandbox.advance(LATER_SECONDS),
    async events() {
      return (
        (await (await fetch(`${url}/__sandbox/events`)).json()) as {
          events: Awaited<ReturnType<SandboxProcess["events"]>>;
        }
      ).events;
    },
    lastSeq: async () => (await sandbox.events()).at(-1)?.seq ?? 0,
    async refreshesSince(seq) {
      return (await sandbox.events())
        .filter((e) => e.seq > seq && e.grantType === "refresh_token")
        .map((e) => `${e.outcome}${e.detail ? ` ${e.detail}` : ""}`);
    },
    async close() {
      proc.process.kill("SIGTERM");
      await proc.exited;
    },
  };
  return sandbox;
}

/** A worker process (file-worker.mjs) keeping its tokens in `file`; resolves once it is ready. */
export async function startWorker(
  url: string,
  file: string,
  clientId: string,
  redirectUri: string,
  storageOptions?: object,
): Promise<Child> {
  const args = [WORKER, url, file, clientId, redirectUri];
  if (storageOptions) args.push(JSON.stringify(storageOptions));
  return startReady(args);
}

/** A Node script of the test's own, run with `args`, that prints one JSON object per line. */
export function startScript(script: string, ...args: string[]): Child {
  return startJsonLines([script, ...args]);
}

export { stopAll, together } from "@tenant-integration/test-support/processes";
