/**
 * Test helpers for the multi-process tests: the sandbox as a real server process, and worker
 * processes (file-worker.mjs) that use the built package as a command-line tool would.
 * Not part of the package (excluded from the build).
 *
 * The sandbox is started from its built CLI by path, not imported: the sandbox's own tests depend on
 * this package, so a dependency back would be a cycle in the workspace graph. turbo.json of this
 * package makes its test tasks depend on `@tenant-integration/sandbox#build` instead.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const SANDBOX_CLI = fileURLToPath(new URL("../../../sandbox/dist/cli.js", import.meta.url));
const WORKER = fileURLToPath(new URL("./file-worker.mjs", import.meta.url));

/** One line of JSON from a child process. */
export type Message = Record<string, unknown>;

/** A child process that speaks one JSON object per line. */
export interface Child {
  readonly process: ChildProcess;
  /** The next line it prints (rejects if it exits first). */
  next(): Promise<Message>;
  /** Writes one command line to its stdin. */
  send(command: Message): void;
  /** Resolves when it has exited. */
  readonly exited: Promise<void>;
}

function child(args: string[]): Child {
  const proc = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"] });
  const queue: Message[] = [];
  const waiting: ((m: Message | Error) => void)[] = [];
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    const message = JSON.parse(line) as Message;
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const exited = new Promise<void>((resolve) =>
    proc.once("exit", () => {
      for (const waiter of waiting.splice(0)) waiter(new Error(`process exited: ${stderr}`));
      resolve();
    }),
  );
  return {
    process: proc,
    next: () => {
      const message = queue.shift();
      if (message) return Promise.resolve(message);
      if (proc.exitCode !== null || proc.signalCode !== null)
        return Promise.reject(new Error(`process exited: ${stderr}`));
      return new Promise((resolve, reject) => waiting.push((m) => (m instanceof Error ? reject(m) : resolve(m))));
    },
    send: (command) => proc.stdin!.write(`${JSON.stringify(command)}\n`),
    exited,
  };
}

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
  const proc = child([
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
  const worker = child(args);
  const ready = await worker.next();
  if (!ready["ready"]) throw new Error(`worker not ready: ${JSON.stringify(ready)}`);
  return worker;
}

/** A Node script of the test's own, run with `args`, that prints one JSON object per line. */
export function startScript(script: string, ...args: string[]): Child {
  return child([script, ...args]);
}

/** Sends `command` to every worker at once (the barrier: all are ready and waiting on stdin) and collects their answers. */
export async function together(workers: readonly Child[], command: Message): Promise<Message[]> {
  const answers = workers.map((w) => w.next());
  for (const w of workers) w.send(command);
  return Promise.all(answers);
}

/** Kills the processes (SIGKILL) and waits until they are gone. */
export async function stopAll(children: readonly Child[]): Promise<void> {
  for (const c of children) c.process.kill("SIGKILL");
  await Promise.all(children.map((c) => c.exited));
}
