// The file storage across processes, against the real sandbox (strict rotation: a rotated-away
// refresh token presented again revokes the family):
//
// 1. the crash window: the time from the token response being parsed to the rotated tokens being
//    durable on disk (temporary file fsynced, renamed, directory fsynced);
// 2. the fraction of refreshes killed with SIGKILL at a random instant that lose the session (the
//    process died after the tenant rotated the refresh token and before the write).
//
// 20 TypeScript processes on one token file after expiry, against one alone, are fleets.mjs's rows,
// beside every other kit's, with their floor and A/A (issue 41); they were measured here before.
// Workers are real processes (file-process.mjs) using the built package with `fileStorage(file)`.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startSandbox } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";
import { rowLine } from "./report.mjs";

const WORKER = join(dirname(fileURLToPath(import.meta.url)), "file-process.mjs");
const CLIENT = "bench-cli";
const REDIRECT = "http://127.0.0.1:53682/callback";
const LATER_SECONDS = 901;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** A worker process, ready to be released. */
async function worker(url, file) {
  const proc = spawn(process.execPath, [WORKER, url, file, CLIENT, REDIRECT], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = [];
  const waiting = [];
  createInterface({ input: proc.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else lines.push(message);
  });
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  let gone = false;
  // A worker that dies before answering must fail the bench, not leave it waiting forever.
  exited.then((code) => {
    gone = true;
    for (const waiter of waiting.splice(0)) waiter({ ok: false, exited: code });
  });
  const next = () =>
    lines.length
      ? Promise.resolve(lines.shift())
      : gone
        ? Promise.resolve({ ok: false, exited: true })
        : new Promise((resolve) => waiting.push(resolve));
  const ready = await next();
  if (ready.ok === false) throw new Error(`a bench worker exited before it was ready (${JSON.stringify(ready)})`);
  return { proc, next, exited, go: (offsetMs) => proc.stdin.write(`${JSON.stringify({ offsetMs })}\n`) };
}

/**
 * A sandbox (strict rotation unless `sandboxOptions` say otherwise) with a temporary folder for token
 * files, a clock to move past expiry, and sign-in into a token file.
 */
async function benchTenant(sandboxOptions = {}) {
  const running = await startSandbox({
    clients: [{ id: CLIENT, redirectUris: [REDIRECT] }],
    autoApprove: true,
    testClock: true,
    ...sandboxOptions,
  });
  const dir = mkdtempSync(join(tmpdir(), "bench-file-storage-"));
  const tenant = {
    running,
    dir,
    offsetMs: 0,
    expire() {
      running.sandbox.clock.advance(LATER_SECONDS);
      tenant.offsetMs += LATER_SECONDS * 1000;
    },
    refreshes: () =>
      running.sandbox.events().filter((e) => e.grantType === "refresh_token" && e.outcome === "ok").length,
    /** A manager in this process on `storage`, its clock following the sandbox's. */
    manager: (storage, fetch) =>
      createTokenManager({
        baseUrl: running.url,
        clientId: CLIENT,
        redirectUri: REDIRECT,
        scopes: ["profile:read"],
        storage,
        now: () => Date.now() + tenant.offsetMs,
        ...(fetch ? { fetch } : {}),
      }),
    async signIn(file) {
      const tm = tenant.manager(fileStorage(file));
      const { url } = await tm.beginAuthorization();
      await tm.completeAuthorization((await fetch(url, { redirect: "manual" })).headers.get("location"));
    },
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return tenant;
}

/**
 * `kills` worker processes, each released into a refresh after expiry and killed with SIGKILL at a
 * random instant within 1.5 × a refresh's median duration; after each, a fresh manager checks whether
 * the session survived. Returns how many kills lost it, and the span the kills were spread over.
 */
async function randomKills(tenant, kills) {
  const { running, dir } = tenant;
  const killFile = join(dir, "tokens-kill.json");
  await tenant.signIn(killFile);
  const durations = [];
  for (let i = 0; i < 5; i++) {
    tenant.expire();
    const w = await worker(running.url, killFile);
    const t0 = performance.now();
    w.go(tenant.offsetMs);
    const answer = await w.next();
    if (!answer.ok) throw new Error(`a bench worker failed its refresh: ${JSON.stringify(answer)}`);
    durations.push(performance.now() - t0);
    w.proc.kill();
  }
  const span = median(durations) * 1.5;
  let lost = 0;
  for (let i = 0; i < kills; i++) {
    tenant.expire();
    const w = await worker(running.url, killFile);
    w.go(tenant.offsetMs);
    await new Promise((r) => setTimeout(r, Math.random() * span));
    w.proc.kill("SIGKILL");
    await w.exited;
    // The killed holder is known dead: remove its lock at once instead of waiting for it to go stale.
    for (const name of readdirSync(dir))
      if (name.endsWith(".lock")) rmSync(join(dir, name), { recursive: true, force: true });
    try {
      await tenant.manager(fileStorage(killFile)).getAccessToken();
    } catch (e) {
      if (e?.code !== "SESSION_ENDED") throw e;
      lost++;
      await tenant.signIn(killFile);
    }
  }
  return { lost, span };
}

export async function fileStorageFigures() {
  const tenant = await benchTenant();
  const { dir, expire, manager, signIn } = tenant;
  const GRACE_SECONDS = 30;
  const KILLS = 40;
  try {
    // 1. The crash window, in this process: response parsed → rotated tokens durable.
    const windowFile = join(dir, "tokens-window.json");
    await signIn(windowFile);
    let received = 0;
    const windows = [];
    const storage = fileStorage(windowFile);
    const timed = {
      lock: storage.lock,
      refreshIntents: storage.refreshIntents,
      get: storage.get,
      delete: storage.delete,
      async set(key, value) {
        await storage.set(key, value);
        if (received) windows.push(performance.now() - received);
        received = 0;
      },
    };
    const timedFetch = async (input, init) => {
      const response = await fetch(input, init);
      const text = await response.text();
      // The manager parses this text at once; the window starts here.
      if (String(init.body).includes('"refresh_token"')) received = performance.now();
      return new Response(text, { status: response.status, headers: response.headers });
    };
    for (let i = 0; i < 50; i++) {
      expire();
      await manager(timed, timedFetch).getAccessToken();
    }

    // 2. Random kills during a refresh, under strict rotation and under a rotation grace.
    const strict = await randomKills(tenant, KILLS);
    const graceTenant = await benchTenant({ rotationGraceSeconds: GRACE_SECONDS });
    const grace = await randomKills(graceTenant, KILLS).finally(() => graceTenant.close());

    return [
      {
        metric: "crash window: token response parsed → rotated tokens durable (fsync, rename, fsync dir)",
        value: `${median(windows).toFixed(2)} ms median, ${percentile(windows, 0.95).toFixed(2)} ms p95 (50 refreshes)`,
        goal: "as short as the platform allows",
        met: null,
      },
      {
        metric: "SIGKILL at a random instant of a refresh (strict rotation, the sandbox's default)",
        value: `${strict.lost} of ${KILLS} kills lost the session (${((strict.lost / KILLS) * 100).toFixed(0)} %), kills spread over ${strict.span.toFixed(0)} ms from release`,
        goal: "the crash window's share only",
        met: null,
      },
      {
        metric: `SIGKILL at a random instant of a refresh (sandbox --rotation-grace ${GRACE_SECONDS})`,
        value: `${grace.lost} of ${KILLS} kills lost the session (${((grace.lost / KILLS) * 100).toFixed(0)} %), kills spread over ${grace.span.toFixed(0)} ms from release`,
        goal: "",
        met: null,
      },
    ];
  } finally {
    await tenant.close();
  }
}

// `node tools/bench/crash-window.mjs` prints these rows alone (build first).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await fileStorageFigures()) console.log(rowLine(row));
}
