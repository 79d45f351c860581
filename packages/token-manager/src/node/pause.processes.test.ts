/**
 * Issue 21, on fileStorage: a lock holder that pauses (SIGSTOP: a closed laptop lid, a migrated VM,
 * a long GC pause, a breakpoint) must not end everyone's session. A fleet with its holder paused at
 * each point of the refresh is a conformance scenario now (spec/conformance/scenarios/holder-paused.yaml,
 * every target alone and mixed), and so is a single process stopped while the tenant holds its answer
 * (paused-awaiting-answer.yaml); what stays here is the lock's owner file. Real worker processes (the BUILT
 * package, test-support/file-worker.mjs), real signals, and the real sandbox process with strict rotation
 * (a rotated-away refresh token presented again revokes the family, RFC 9700 §4.14.2).
 *
 * The geometry (a 10 s stale bound, a 13 s pause) is kept at a smaller scale to bound CI
 * time: staleMs 2 s, a 3 s pause, a 2 s request timeout (shorter than the pause), a 6 s intent wait.
 * The pause is the test's orchestration, never an assertion.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startSandboxProcess,
  startScript,
  startWorker,
  stopAll,
  type SandboxProcess,
} from "../test-support/processes.js";

const CLIENT_ID = "pause-cli";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const STORAGE = { staleMs: 2_000 };

let sandbox: SandboxProcess;
let dir: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  sandbox = await startSandboxProcess(CLIENT_ID, REDIRECT_URI);
  dir = await mkdtemp(join(tmpdir(), "pause-processes-"));
});

afterAll(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the file lock's owner (pid and host)", () => {
  it("a holder paused with SIGSTOP past staleMs is not taken over while it lives: the waiter fails with LOCK_TIMEOUT naming it as alive, and the holder finishes alone", async () => {
    const file = join(dir, "tokens-owner.json");
    const log = join(dir, "owner.log");
    const holder = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, STORAGE);
    const waiter = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, { ...STORAGE, lockTimeoutMs: 4_000 });
    try {
      const held = holder.next();
      holder.send({ cmd: "hold-lock", log, ms: 300 });
      while (!(await readFile(log, "utf8").catch(() => "")).includes("in")) await sleep(10);
      holder.process.kill("SIGSTOP");
      waiter.send({ cmd: "hold-lock", log, ms: 10 });
      const refused = await waiter.next();
      expect(refused).toMatchObject({ error: "LOCK_TIMEOUT", name: "FileStorageError" });
      expect(refused["message"]).toContain(
        `by process ${holder.process.pid} on this host, which is alive but has not updated the lock`,
      );
      holder.process.kill("SIGCONT");
      expect(await held).toEqual({ held: true });
      const pid = holder.process.pid;
      expect((await readFile(log, "utf8")).trim().split("\n")).toEqual([`in ${pid}`, `out ${pid}`]);
    } finally {
      await stopAll([holder, waiter]);
    }
  }, 60_000);

  it("the owner file names the holder inside the lock directory, which stays a plain proper-lockfile lock", async () => {
    const file = join(dir, "tokens-owner-file.json");
    const log = join(dir, "owner-file.log");
    const holder = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, STORAGE);
    try {
      const held = holder.next();
      holder.send({ cmd: "hold-lock", log, ms: 1_000 });
      while (!(await readFile(log, "utf8").catch(() => "")).includes("in")) await sleep(10);
      const owner = JSON.parse(await readFile(`${file}.refresh.lock/owner`, "utf8")) as Record<string, unknown>;
      expect(Object.keys(owner)).toEqual(["pid", "host", "id", "since"]);
      expect(owner).toMatchObject({
        pid: holder.process.pid,
        host: (await import("node:os")).hostname(),
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
      });
      const lockfile = (await import("proper-lockfile")).default;
      expect(
        await lockfile.check(file.replace(/$/, ".refresh"), { lockfilePath: `${file}.refresh.lock`, realpath: false }),
      ).toBe(true);
      expect(await held).toEqual({ held: true });
      await expect(readFile(`${file}.refresh.lock/owner`, "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await stopAll([holder]);
    }
  }, 60_000);
});

/**
 * A command-line process whose refresh starts right as it wakes from a stop, inside a timer callback
 * (a laptop lid opened, a timer due): with `memoryStorage` and the in-process lock, nothing between
 * the wake and `fetch` waits for I/O. The tenant closed the idle keep-alive connection of the
 * process's last request while it was stopped.
 */
const WOKEN_BY_A_TIMER = `
import { createTokenManager, memoryStorage } from ${JSON.stringify(new URL("../../dist/index.js", import.meta.url).href)};
const say = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const baseUrl = process.argv[2];
const storage = memoryStorage();
const record = { access_token: "at_0", refresh_token: "rt_0", token_type: "Bearer", expires_in: 900, received_at: 0, id: "r0", session: "r0", seq: 0 };
await storage.set("tenant-integration:" + baseUrl + ":pause-cli:tokens", JSON.stringify(record));
const tm = createTokenManager({ baseUrl, clientId: "pause-cli", redirectUri: "http://127.0.0.1:53682/callback", scopes: ["profile:read"], storage });
const first = await tm.getAccessToken();
setTimeout(() => {
  say({ stopping: true });
  process.kill(process.pid, "SIGSTOP");
  tm.onUnauthorized(first);
  tm.getAccessToken().then((token) => say({ token }), (e) => say({ error: e.code, cause: String(e.cause?.cause?.message ?? e.cause?.message) }));
}, 50);
`;

describe("a process woken from a stop (regression: issue 27, a refresh sent on a connection the tenant had closed got no answer)", () => {
  let server: Server;
  let refreshes = 0;
  beforeAll(async () => {
    // The tenant's keep-alive: it closes an idle connection after 3 s (the sandbox's is Node's 5 s).
    server = createServer((request, response) => {
      request.resume().on("end", () => {
        refreshes++;
        response.setHeader("Content-Type", "application/json");
        response.end(
          JSON.stringify({
            access_token: `at_${refreshes}`,
            refresh_token: `rt_${refreshes}`,
            token_type: "Bearer",
            expires_in: 900,
          }),
        );
      });
    });
    server.keepAliveTimeout = 3_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends its refresh on a new connection, not on the one the tenant closed meanwhile, and gets its token", async () => {
    const script = join(dir, "woken-by-a-timer.mjs");
    await writeFile(script, WOKEN_BY_A_TIMER);
    const worker = await startScript(script, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      expect(await worker.next()).toEqual({ stopping: true });
      while (!(await readFile(`/proc/${worker.process.pid}/stat`, "utf8")).split(") ")[1]!.startsWith("T"))
        await sleep(10);
      await sleep(4_000);
      worker.process.kill("SIGCONT");
      expect(await worker.next()).toEqual({ token: "at_2" });
      expect(refreshes).toBe(2);
    } finally {
      await stopAll([worker]);
    }
  }, 60_000);
});
