// Where the time of a Python fleet goes (issue 28): 20 Python actors on one Redis (or one token file),
// released together after expiry as fleets.mjs releases them, each stamping the stages of its call
// (fleet-stages.py: the conformance suite's Python actor with stamps around private functions of the
// SDK). Prints, per stage, the median time after the release (with its middle half) of the waiters
// and of the refresher, and how long after the refresher's write the waiters found the tokens.
// A diagnostic to run by hand, not a row of `pnpm bench`: the stamps cost a little, so its times are
// a little longer than fleets.mjs's.
//
// `node tools/bench/fleet-stages.mjs [redis|file] [rounds]` (default: redis, 6 rounds after one untimed).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startActor, venvPython } from "../conformance/src/suite/actor.mjs";
import { EXPIRE_SECONDS, startRedis, startSandbox } from "../conformance/src/suite/services.mjs";
import { quantile } from "./stats.mjs";

const FLEET = 20;
const CLIENT_ID = "bench-stages";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const PROBE = join(dirname(fileURLToPath(import.meta.url)), "fleet-stages.py");

/** The stamps an actor wrote since `from` (an index of its transcript), in ms after `t0` (ns, CLOCK_MONOTONIC). */
function stamps(actor, from, t0) {
  return actor.transcript
    .slice(from)
    .filter((line) => line.startsWith("STAGE "))
    .map((line) => JSON.parse(line.slice(6)))
    .map(({ t, s, r }) => ({ stage: s, r, ms: Number(BigInt(t) - t0) / 1e6 }));
}

const first = (st, stage, r) => st.find((x) => x.stage === stage && (r === undefined || x.r === r))?.ms;
const last = (st, stage) => st.findLast((x) => x.stage === stage)?.ms;

/** The stages of one call, in ms after the release (undefined where a stage did not happen). */
function stagesOf(st, refreshed, written, published) {
  if (refreshed)
    return {
      "command read": first(st, "command-read<"),
      "read first (storage) done": first(st, "read-first<"),
      "lock taken (under the lock)": first(st, "under-lock>"),
      "refresh request sent": first(st, "refresh-request>"),
      "refresh answered": first(st, "refresh-request<"),
      "tokens written": first(st, "tokens-written<"),
      "release announced (Redis)": last(st, "publish<"),
      "user read (/me answered)": last(st, "get-user<"),
      "answer sent": last(st, "call<"),
    };
  const found = first(st, "until<", true);
  const woken = last(st, "wait<");
  return {
    "command read": first(st, "command-read<"),
    "read first (storage) done": first(st, "read-first<"),
    "first lock try done (Redis)": first(st, "lock-try<"),
    "subscribed to releases (Redis)": first(st, "subscribe<"),
    "woken (Redis)": woken,
    "fresh tokens found while waiting": found,
    "user read (/me answered)": last(st, "get-user<"),
    "answer sent": last(st, "call<"),
    "tokens written → found (ms after the write)": found === undefined ? undefined : found - written,
    "release announced → woken (ms after it)":
      woken === undefined || published === undefined ? undefined : woken - published,
    "took the lock itself (share)": first(st, "under-lock>") === undefined ? 0 : 1,
  };
}

async function main() {
  const storage = process.argv[2] ?? "redis";
  const rounds = Number(process.argv[3] ?? 6);
  const python = venvPython();
  if (!python) throw new Error("the repository's Python venv is missing (node tools/python/venv.mjs)");
  const dir = mkdtempSync(join(tmpdir(), "bench-stages-"));
  const tenant = await startSandbox([{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }]);
  const redis = storage === "redis" ? await startRedis() : undefined;
  let actors = [];
  try {
    const config = {
      tenant: tenant.url,
      clientId: CLIENT_ID,
      redirectUri: REDIRECT_URI,
      scopes: ["profile:read"],
      storage:
        storage === "redis"
          ? { kind: "redis", url: redis.url, prefix: "bench-stages:" }
          : { kind: "file", path: join(dir, "tokens.json") },
      clockOffsetMs: 0,
      manager: {},
    };
    actors = await Promise.all(
      Array.from({ length: FLEET }, (_, i) =>
        startActor({ name: `s${i}`, target: "python", config, command: [python, PROBE], step: () => "stages" }),
      ),
    );
    const signedIn = await actors[0].request("sign-in");
    if (!signedIn.ok) throw new Error(`sign-in failed: ${signedIn.error.code}`);
    for (const actor of actors) await actor.request("call");
    const waiters = {};
    const refresher = {};
    const walls = [];
    for (let round = 0; round <= rounds; round++) {
      await tenant.advance(EXPIRE_SECONDS);
      await Promise.all(actors.map((actor) => actor.request("clock", { offsetMs: tenant.offsetMs })));
      const from = actors.map((actor) => actor.transcript.length);
      const t0 = process.hrtime.bigint();
      const answers = await Promise.all(actors.map((actor) => actor.request("call")));
      walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (answers.some((a) => !a.ok || a.result.status !== 200)) throw new Error("a process did not get the user");
      if (round === 0) continue;
      const calls = actors.map((actor, i) => ({
        st: stamps(actor, from[i], t0),
        refreshed: answers[i].result.refreshed,
      }));
      const theRefresher = calls.find((c) => c.refreshed);
      const written = first(theRefresher?.st ?? [], "tokens-written<");
      const published = last(theRefresher?.st ?? [], "publish<");
      for (const { st, refreshed } of calls) {
        const into = refreshed ? refresher : waiters;
        for (const [stage, ms] of Object.entries(stagesOf(st, refreshed, written, published))) {
          if (ms === undefined) continue;
          into[stage] ??= [];
          into[stage].push(ms);
        }
      }
    }
    const line = (stage, xs) =>
      `  ${stage}: ${quantile(xs, 0.5).toFixed(1)} (middle half ${quantile(xs, 0.25).toFixed(1)}–${quantile(xs, 0.75).toFixed(1)}, n ${xs.length})`;
    console.log(
      `${FLEET} Python processes on ${storage}, ${rounds} rounds; wall per round (ms): ${walls
        .slice(1)
        .map((w) => w.toFixed(0))
        .join(", ")}`,
    );
    console.log("the refresher, ms after the release:");
    for (const [stage, xs] of Object.entries(refresher)) console.log(line(stage, xs));
    console.log("the waiters, ms after the release:");
    for (const [stage, xs] of Object.entries(waiters)) console.log(line(stage, xs));
  } finally {
    await Promise.all(actors.map((actor) => actor.stop()));
    await redis?.close();
    await tenant.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
