// Fleets after expiry, in every language, on a token file and on Redis: the wall time until every
// process of a fleet of 20 holds a token and has read the user, released together after the access
// token expired (one refreshes, the others wait on the storage's lock and read the new tokens), next
// to one process alone doing the same refresh; with the refreshes the tenant answered per expiry
// (goal: 1). The processes are the conformance suite's actors (tools/conformance/actors: each kit's
// public API only), against the sandbox process and a redis-server on loopback.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCommands, startActor } from "../conformance/src/suite/actor.mjs";
import { EXPIRE_SECONDS, findRedisServer, startRedis, startSandbox } from "../conformance/src/suite/services.mjs";

const FLEET = 20;
const ROUNDS = 5;
const CLIENT_ID = "bench-fleet";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const LABELS = { node: "TypeScript", python: "Python", mixed: "TypeScript and Python (alternating)" };
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The kit of each of `size` processes: all of `target`, or TypeScript and Python in turn for "mixed". */
const kitsOf = (target, size) =>
  Array.from({ length: size }, (_, i) => (target === "mixed" ? (i % 2 ? "python" : "node") : target));

/** `size` ready actors of `target` sharing `storage`, signed in by the first; each has called once (warm). */
async function fleetOf(tenant, target, storage, size, name) {
  const config = {
    tenant: tenant.url,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scopes: ["profile:read"],
    storage,
    clockOffsetMs: tenant.offsetMs,
    manager: {},
  };
  const commands = defaultCommands();
  const actors = await Promise.all(
    kitsOf(target, size).map((kit, i) =>
      startActor({ name: `${name}${i}`, target: kit, config, command: commands[kit], step: () => "warm-up" }),
    ),
  );
  const answer = await actors[0].request("sign-in");
  if (!answer.ok) throw new Error(`sign-in failed: ${answer.error.code}`);
  for (const actor of actors) await actor.request("call");
  return actors;
}

/** The refreshes the tenant answered ok since the ledger was last cleared. */
async function refreshes(tenant) {
  const ledger = await tenant.ledger();
  return ledger.refreshTokens.flatMap((token) => token.presentations).filter((p) => p.outcome === "ok").length;
}

/**
 * One row: `FLEET` processes of `target` on `storage` ("file" or "redis") against one alone ("mixed":
 * TypeScript and Python in turn, against one TypeScript process alone).
 *
 * @param {"node" | "python" | "go" | "mixed"} target
 * @param {"file" | "redis"} storage
 */
export async function fleet(target, storage) {
  const metric = `${FLEET} ${LABELS[target]} processes on ${storage === "file" ? "one token file" : "one Redis"} all hold a token after expiry`;
  const goal = `1 refresh per expiry; within 5× one process`;
  const commands = defaultCommands();
  if (!kitsOf(target, 2).every((kit) => commands[kit]))
    return [
      {
        metric,
        value: "left out: the repository's Python venv is missing (node tools/python/venv.mjs)",
        goal,
        met: null,
      },
    ];
  const server = storage === "redis" ? findRedisServer() : undefined;
  if (storage === "redis" && !server)
    return [{ metric, value: "left out: redis-server is not installed", goal, met: null }];

  const dir = mkdtempSync(join(tmpdir(), "bench-fleet-"));
  const tenant = await startSandbox([{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }]);
  const redis = server ? await startRedis({ command: server.command }) : undefined;
  const fleets = [];
  const storageFor = (name) =>
    storage === "file"
      ? { kind: "file", path: join(dir, name, "tokens.json") }
      : { kind: "redis", url: redis.url, prefix: `bench-${name}:` };
  try {
    const many = await fleetOf(tenant, target, storageFor("many"), FLEET, "m");
    fleets.push(many);
    const one = await fleetOf(tenant, target === "mixed" ? "node" : target, storageFor("one"), 1, "o");
    fleets.push(one);
    const walls = { many: [], one: [] };
    const counts = [];
    // One untimed round first: no timed round pays a process's first refresh.
    for (let round = 0; round <= ROUNDS; round++) {
      await tenant.advance(EXPIRE_SECONDS);
      for (const [name, actors] of [
        ["many", many],
        ["one", one],
      ]) {
        await Promise.all(actors.map((actor) => actor.request("clock", { offsetMs: tenant.offsetMs })));
        await tenant.reset();
        const start = performance.now();
        const answers = await Promise.all(actors.map((actor) => actor.request("call")));
        const wall = performance.now() - start;
        const failed = answers.find((answer) => !answer.ok || answer.result.status !== 200);
        if (failed)
          throw new Error(
            `a process of the ${name} fleet did not get the user: ${JSON.stringify(failed.error ?? failed.result)}`,
          );
        if (round === 0) continue;
        walls[name].push(wall);
        if (name === "many") counts.push(await refreshes(tenant));
      }
    }
    const ratio = median(walls.many) / median(walls.one);
    return [
      {
        metric,
        value: `${median(walls.many).toFixed(0)} ms wall, ${ratio.toFixed(1)}× one process alone (${median(walls.one).toFixed(0)} ms); median of ${ROUNDS} rounds; refreshes per expiry: ${counts.join(", ")}`,
        goal,
        met: counts.every((n) => n === 1) && ratio <= 5,
      },
    ];
  } finally {
    for (const actors of fleets) await Promise.all(actors.map((actor) => actor.stop()));
    await redis?.close();
    await tenant.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The fleet rows: TypeScript, Python and both mixed on Redis, and (Python; TypeScript's is under "File
 * storage across processes") on a token file.
 */
export async function fleets() {
  return [
    ...(await fleet("node", "redis")),
    ...(await fleet("python", "redis")),
    ...(await fleet("mixed", "redis")),
    ...(await fleet("python", "file")),
  ];
}

// `node tools/bench/fleets.mjs` prints the rows alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await fleets());
