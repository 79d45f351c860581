/**
 * Worker processes for the multi-process tests (worker.mjs, which uses the BUILT package as a server
 * of the user's would), and the sandbox they sign in to, served from this test process on a free
 * loopback port with its test clock.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { REDIRECT } from "./helpers.js";

const WORKER = fileURLToPath(new URL("./worker.mjs", import.meta.url));

/** One line of JSON from a worker. */
export type Message = Record<string, unknown>;

/** A worker process that speaks one JSON object per line. */
export interface Worker {
  readonly process: ChildProcess;
  /** The next line it prints (rejects if it exits first). */
  next(): Promise<Message>;
  /** Writes one command line to its stdin. */
  send(command: Message): void;
  readonly exited: Promise<void>;
}

/** A client id no other test file uses, so that files sharing one sandbox process never share tokens. */
export const CLIENT_ID = "processes-demo";

/** The sandbox, served on a free loopback port: auto-approve, strict rotation, the test clock. */
export async function serveSandbox(
  clientId = CLIENT_ID,
): Promise<RunningSandbox & { offsetMs(): number; expire(): void }> {
  const running = await startSandbox({
    port: 0,
    autoApprove: true,
    testClock: true,
    clients: [{ id: clientId, redirectUris: [REDIRECT] }],
  });
  let offsetMs = 0;
  return Object.assign(running, {
    offsetMs: () => offsetMs,
    /** Moves the sandbox's clock (and the workers', by `offsetMs`) past the access token's 15 minutes. */
    expire() {
      running.sandbox.clock.advance(901);
      offsetMs += 901_000;
    },
  });
}

/** The `refresh_token` grants the sandbox answered since its event `seq`: `"ok"`, or the error and its detail. */
export function refreshesSince(running: RunningSandbox, seq: number): string[] {
  return running.sandbox
    .events()
    .filter((e) => e.seq > seq && e.grantType === "refresh_token")
    .map((e) => `${e.outcome}${e.detail ? ` ${e.detail}` : ""}`);
}

/** The `seq` of the sandbox's last event (0 without any). */
export const lastSeq = (running: RunningSandbox): number => running.sandbox.events().at(-1)?.seq ?? 0;

/**
 * A worker keeping its tokens in `table` on `postgresUrl`, signed in against `sandboxUrl`; resolves
 * once it is ready.
 */
export async function startWorker(
  sandboxUrl: string,
  postgresUrl: string,
  table: string,
  storageOptions: object = {},
  clientId = CLIENT_ID,
): Promise<Worker> {
  const proc = spawn(
    process.execPath,
    [WORKER, sandboxUrl, postgresUrl, table, clientId, REDIRECT, JSON.stringify(storageOptions)],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
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
      for (const waiter of waiting.splice(0)) waiter(new Error(`worker exited: ${stderr}`));
      resolve();
    }),
  );
  const worker: Worker = {
    process: proc,
    next: () => {
      const message = queue.shift();
      if (message) return Promise.resolve(message);
      if (proc.exitCode !== null || proc.signalCode !== null)
        return Promise.reject(new Error(`worker exited: ${stderr}`));
      return new Promise((resolve, reject) => waiting.push((m) => (m instanceof Error ? reject(m) : resolve(m))));
    },
    send: (command) => proc.stdin!.write(`${JSON.stringify(command)}\n`),
    exited,
  };
  const ready = await worker.next();
  if (!ready["ready"]) throw new Error(`worker not ready: ${JSON.stringify(ready)}`);
  return worker;
}

/** Sends `command` to every worker at once (each is ready and waiting on stdin) and collects their answers. */
export async function together(workers: readonly Worker[], command: Message): Promise<Message[]> {
  const answers = workers.map((w) => w.next());
  for (const w of workers) w.send(command);
  return Promise.all(answers);
}

/** Kills the workers (SIGKILL, after SIGCONT for a stopped one) and waits until they are gone. */
export async function stopAll(workers: readonly Worker[]): Promise<void> {
  for (const w of workers) {
    w.process.kill("SIGCONT");
    w.process.kill("SIGKILL");
  }
  await Promise.all(workers.map((w) => w.exited));
}
