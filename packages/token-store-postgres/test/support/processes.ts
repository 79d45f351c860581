/**
 * Worker processes for the multi-process tests (worker.mjs, which uses the BUILT package as a server
 * of the user's would), and the sandbox they sign in to, served from this test process on a free
 * loopback port with its test clock.
 */
import { fileURLToPath } from "node:url";
import { type Child, startReady } from "@tenant-integration/test-support/processes";
import { startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { REDIRECT } from "./helpers.js";

const WORKER = fileURLToPath(new URL("./worker.mjs", import.meta.url));

/** A worker process that speaks one JSON object per line. */
export type Worker = Child;
export type { Message } from "@tenant-integration/test-support/processes";

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
  return startReady([WORKER, sandboxUrl, postgresUrl, table, clientId, REDIRECT, JSON.stringify(storageOptions)]);
}

export { stopAll, together } from "@tenant-integration/test-support/processes";
