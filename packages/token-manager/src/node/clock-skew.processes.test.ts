/**
 * fileStorage across real processes whose clocks disagree by up to 200 ms, against the real sandbox.
 * Every worker is a Node process running the BUILT package as a command-line tool would
 * (testing/file-worker.mjs), its clock the sandbox's plus its own offset.
 *
 * Regression guard for issue 20: a process whose clock was a few ms behind the one that refreshed
 * saw the stored record "received in the future", treated it as expired and refreshed again (5 ms
 * behind: 2 refreshes). A record stamped in this clock's future now counts as received now.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxProcess, startWorker, stopAll, type Child, type Message, type SandboxProcess } from "../testing/processes.js";

const CLIENT_ID = "skewed-cli";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
/** Each worker's clock against the sandbox's, in ms: some behind, some ahead, 200 ms apart at most. */
const SKEWS_MS = [0, -5, -60, -200, 5, 120];
const EXPIRIES = 5;

let sandbox: SandboxProcess;
let dir: string;
let workers: Child[] = [];

beforeAll(async () => {
  sandbox = await startSandboxProcess(CLIENT_ID, REDIRECT_URI);
  dir = await mkdtemp(join(tmpdir(), "clock-skew-processes-"));
  const file = join(dir, "tokens.json");
  workers = await Promise.all(SKEWS_MS.map(() => startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI)));
  workers[0]!.send({ cmd: "sign-in", offsetMs: sandbox.offsetMs });
  expect(await workers[0]!.next()).toEqual({ signedIn: true });
}, 60_000);

afterAll(async () => {
  await stopAll(workers);
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Asks each worker (index `i`) for a token and the user with its own clock, and collects the answers. */
async function call(indexes: readonly number[]): Promise<Message[]> {
  const answers = indexes.map((i) => workers[i]!.next());
  for (const i of indexes) workers[i]!.send({ cmd: "call", offsetMs: sandbox.offsetMs + SKEWS_MS[i]! });
  return Promise.all(answers);
}

const USER = { status: 200, user: "Ada Lovelace" };

describe(`${SKEWS_MS.length} processes on one token file, clocks up to 200 ms apart`, () => {
  it("one whose clock is ahead refreshes; those behind it then find its record fresh and make no refresh", async () => {
    await sandbox.expire();
    const seq = await sandbox.lastSeq();
    const ahead = SKEWS_MS.indexOf(Math.max(...SKEWS_MS));
    expect(await call([ahead])).toEqual([USER]);
    const behind = SKEWS_MS.map((_, i) => i).filter((i) => i !== ahead);
    expect(await call(behind)).toEqual(behind.map(() => USER));
    expect(await sandbox.refreshesSince(seq)).toEqual(["ok"]);
  }, 60_000);

  it(`released together after each of ${EXPIRIES} expiries, make exactly one refresh per expiry, and every process gets the user`, async () => {
    const all = SKEWS_MS.map((_, i) => i);
    for (let expiry = 1; expiry <= EXPIRIES; expiry++) {
      await sandbox.expire();
      const seq = await sandbox.lastSeq();
      const answers = await call(all);
      expect({ expiry, answers, refreshes: await sandbox.refreshesSince(seq) }).toEqual({ expiry, answers: all.map(() => USER), refreshes: ["ok"] });
    }
  }, 120_000);
});
