// A trial of many sessions on one token file (not part of `pnpm test`; figures in the README, "A
// server acting for many users"): signs N sessions in through a sandbox process, moves the tenant's
// clock past their expiry, then has P processes ask for every session's token at once, and prints
// how many refreshes the tenant saw, how many were refused, and each process's failures and time.
//
//   pnpm --filter @tenant-integration/token-manager build
//   node packages/token-manager/scripts/sessions-file-trial.mjs main <processes> <sessions>
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { createSessions } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";

const REDIRECT = "http://127.0.0.1:53682/callback";
const [role, url, file, nArg, offsetArg] = process.argv.slice(2);
const N = Number(nArg ?? 100);
const sessionsOf = (offsetMs = 0) =>
  createSessions({
    baseUrl: url,
    clientId: "trial",
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage: fileStorage(file),
    now: () => Date.now() + offsetMs,
  });

if (role === "worker") {
  const s = sessionsOf(Number(offsetArg));
  const t0 = performance.now();
  const out = await Promise.allSettled(Array.from({ length: N }, (_, i) => s.manager(`u${i}`).getAccessToken()));
  const errors = out.filter((o) => o.status === "rejected").map((o) => o.reason?.code ?? String(o.reason));
  console.log(
    JSON.stringify({ ms: Math.round(performance.now() - t0), errors: [...new Set(errors)], failed: errors.length }),
  );
  process.exit(0);
} else {
  const P = Number(process.argv[3] ?? 4);
  const n = Number(process.argv[4] ?? 100);
  const sandbox = spawn(
    process.execPath,
    [
      fileURLToPath(new URL("../../sandbox/dist/cli.js", import.meta.url)),
      "--port",
      "0",
      "--auto-approve",
      "--test-clock",
      "--json",
      "--client",
      `id=trial,redirect=${REDIRECT}`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: sandbox.stdout });
  const first = await new Promise((r) => lines.once("line", r));
  const base = JSON.parse(first).url;
  const tokenFile = join(mkdtempSync(join(tmpdir(), "ti-trial-")), "tokens.json");
  const s = createSessions({
    baseUrl: base,
    clientId: "trial",
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage: fileStorage(tokenFile),
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const { url: authorize, browser } = await s.beginSignIn({ session: `u${i}` });
    const approved = await fetch(authorize, { redirect: "manual" });
    await s.completeSignIn(approved.headers.get("location"), { browser });
  }
  const signInMs = Math.round(performance.now() - t0);
  await fetch(`${base}/__sandbox/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advanceSeconds: 960 }),
  });
  const workers = Array.from({ length: P }, () =>
    spawn(process.execPath, [fileURLToPath(import.meta.url), "worker", base, tokenFile, String(n), "960000"], {
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const results = await Promise.all(
    workers.map((w) => new Promise((r) => createInterface({ input: w.stdout }).once("line", (l) => r(JSON.parse(l))))),
  );
  const events = (await (await fetch(`${base}/__sandbox/events`)).json()).events;
  const refreshes = events.filter((e) => e.grantType === "refresh_token");
  const bad = refreshes.filter((e) => e.outcome !== "ok");
  console.log(
    JSON.stringify({
      sessions: n,
      processes: P,
      signInMs,
      workers: results,
      refreshes: refreshes.length,
      notOk: bad.map((e) => `${e.outcome} ${e.detail ?? ""}`).slice(0, 5),
      notOkCount: bad.length,
    }),
  );
  sandbox.kill("SIGTERM");
}
