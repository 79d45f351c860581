// Fleets after expiry, in every language, on a token file and on Redis: the wall time until every
// process of a fleet of 20 holds a token and has read the user, released together after the access
// token expired (one refreshes, the others wait on the storage's lock and read the new tokens), next
// to one process alone doing the same refresh; with the refreshes the tenant answered per expiry
// (goal: 1). The processes are the conformance suite's actors (tools/conformance/actors: each kit's
// public API only), against the sandbox process and a redis-server on loopback.
//
// Beside each fleet, its floor: the same processes released together with a fresh token (no refresh,
// no lock, no storage: each reads the user), against the same one alone. On a machine of few cores,
// 20 processes released together share the CPU, so most of a fleet's ratio can be the machine, not the
// coordination; the floor's ratio is that share. What coordination itself costs (issue 41) is its own
// row, in ms, per round: (fleet after expiry − its floor) − (one after expiry − its floor), what
// waiting for one refresh adds to 20 processes beyond what the refresh costs one; and, per storage,
// each kit's figure against Go's, paired by round, since TypeScript, Python and Go run in the same
// rounds (goal: within Go's). Every ratio and difference has its A/A beside it (stats.mjs): a second
// lone process in place of the first (and in place of the fleet, for the coordination cost), and a
// second Go fleet against the first for the comparisons with Go. Each release also records the CPU
// time every process used (/proc/<pid>/stat: user + system, all threads), which a busy neighbour
// does not stretch as it stretches the wall time.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCommands, startActor } from "../conformance/src/suite/actor.mjs";
import { TARGETS } from "../conformance/src/suite/scenarios.mjs";
import {
  EXPIRE_SECONDS,
  findPostgres,
  findRedisServer,
  startPostgresService,
  startRedis,
  startSandbox,
} from "../conformance/src/suite/services.mjs";
import { rowLine } from "./report.mjs";
import { QUICK, formatSpread, judgedRow, paired, pairedDifference, shuffled } from "./stats.mjs";

const FLEET = 20;
/** Timed rounds, after one untimed: each runs the floors of every group, then every group after expiry, each in a random order. */
const ROUNDS = QUICK ? 3 : 11;
const CLIENT_ID = "bench-fleet";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const LABELS = { node: "TypeScript", python: "Python", go: "Go", mixed: "TypeScript and Python (alternating)" };
/** The kits whose fleets run in the same rounds, per storage; Go's coordination cost is the others' goal. */
const KITS = ["node", "python", "go"];
/** A fleet after expiry within this many times one process alone (issue 20). */
const FLEET_GOAL = 5;
/** Actors started at once when a fleet is made. */
const STARTING_AT_ONCE = 5;
/** Linux reports CPU time in /proc in USER_HZ ticks, 100 a second on every architecture it runs on. */
const TICK_MS = 10;
/** The least CPU time over all rounds that a figure is given for: 5 ticks (each reading may be a tick off). */
const CPU_MEASURABLE_MS = 5 * TICK_MS;

/** How the rows are measured, written under the table in BENCHMARKS.md (bench.mjs reads it). */
export const fleetsMethod = `Contenders: 20 processes of one language (the conformance suite's actors, \`tools/conformance/actors\`, each kit's public API only: TypeScript, Python, Go) sharing one token file or one redis-server on loopback, signed in and warm, released together (one \`call\` command each) until all hold a token and have read the user from the sandbox process; against one process of the same language alone doing the same (mixed: TypeScript and Python in turn, against one TypeScript process). Each fleet and each lone process has a session of its own (its own token file or Redis prefix). Per storage, the TypeScript, Python and Go groups run in the same rounds, with two more: a second lone process of each language and a second Go fleet, the A/As. One untimed round, then ${ROUNDS} rounds; each round releases every group with a fresh token (the floor: no refresh, no lock, no storage read; each process only reads the user, and the sandbox's ledger must record no refresh), in a new random order, then moves the sandbox's clock and every actor's 15 min 1 s on and releases every group again after expiry, in a new random order; the refreshes the sandbox's ledger recorded per release are counted (goal: 1 for each group, each round). Rows: a fleet after expiry against one process alone (the median of the rounds' own ratios, middle half and range; goal: within 5×, met when the middle half lies under 5×), with its A/A: the second lone process against the first; its floor, the same with a fresh token, with the floors' A/A (the floor's ratio is what 20 processes sharing the machine's cores cost with no coordination at all: with 2 cores about 10×); the coordination cost, in ms: per round, (fleet after expiry − its floor) − (one after expiry − its floor), what waiting for one refresh added to 20 processes beyond what the refresh cost one, with its A/A (the same with the second lone process in place of the fleet); and, per storage, each kit's coordination cost less Go's, per round (goal: within Go's, met when the middle half of the differences lies at or under 0 ms), with its A/A: the second Go fleet's coordination cost less the first's. A row is noise when its A/A's middle half is wider than the distance from its median to its goal. CPU per process: user + system time of every process, all its threads, from /proc/<pid>/stat before and after each release, summed over the rounds and divided by rounds and processes; the fleet's CPU per expiry beyond its floor, summed over its 20 processes; /proc counts 10 ms ticks, so a side using under 50 ms in all is given as a bound. Rerun: \`node tools/bench/fleets.mjs [file|redis|mixed] [--quick]\` after \`pnpm build\` (the Go actor is built by the Go package's build, Python's needs the venv: \`node tools/python/venv.mjs\`; \`--quick\`: 3 rounds, to check that it runs).`;

/** How the PostgreSQL rows are measured (their own section in bench.mjs: `fleets("postgres")`). */
export const postgresFleetsMethod = `The fleets of the rows above (20 processes of one kit after expiry against one alone, beside their floors, what coordination costs, each kit's against Go's; every ratio and difference with its A/A, the same rounds, the same rules), on PostgreSQL and on Redis in the same rounds, for every kit with a PostgreSQL storage (TypeScript \`postgresStorage\` on a node-postgres \`Pool\`, Go \`postgresstorage\` on a pgx pool, each actor with its own pool as an app makes it), so the two storages are compared round by round on one machine state. PostgreSQL: Debian's 15, started for the run on a free loopback port (tools/postgres, \`max_connections\` 500), one table per group (spec/token-store/postgres/schema.sql under a name of the group's own), its refresh lock the transaction-scoped advisory lock of spec/token-store. Redis: one redis-server, a prefix per group. A kit whose conformance actor has no PostgreSQL storage on this commit (TARGETS in tools/conformance/src/suite/scenarios.mjs; Python until its storage lands) is listed as not measured, with why, and not run on Redis here (its Redis fleet is in the rows above). Rerun: \`node tools/bench/fleets.mjs postgres [--quick]\` after \`pnpm build\`.`;

/** CPU time a process has used so far (user + system, every thread, dead ones included), in ms; undefined without /proc. */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After "pid (comm) ": field 3 (state) onwards; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

/**
 * Sends `call` to every actor at once: the wall time until the last answered, and the CPU time they
 * used together (undefined without /proc). Throws when one did not get the user.
 */
async function release(actors, what) {
  const before = actors.map((actor) => cpuMs(actor.pid));
  const start = performance.now();
  const answers = await Promise.all(actors.map((actor) => actor.request("call")));
  const wall = performance.now() - start;
  const after = actors.map((actor) => cpuMs(actor.pid));
  const failed = answers.find((answer) => !answer.ok || answer.result.status !== 200);
  if (failed)
    throw new Error(`a process of ${what} did not get the user: ${JSON.stringify(failed.error ?? failed.result)}`);
  const cpu = after.every((t, i) => t !== undefined && before[i] !== undefined)
    ? after.reduce((sum, t, i) => sum + t - before[i], 0)
    : undefined;
  return { wall, cpu };
}

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
  // Started a few at a time: 20 interpreters starting at once on a busy 2-core machine can miss the
  // actor's ready bound (60 s), and how fast they start is no part of what is measured.
  const starts = [];
  const kits = kitsOf(target, size);
  for (let at = 0; at < kits.length; at += STARTING_AT_ONCE) {
    starts.push(
      ...(await Promise.allSettled(
        kits.slice(at, at + STARTING_AT_ONCE).map((kit, j) =>
          startActor({
            name: `${name}${at + j}`,
            target: kit,
            config,
            command: commands[kit],
            step: () => "warm-up",
          }),
        ),
      )),
    );
  }
  const actors = starts.filter((s) => s.status === "fulfilled").map((s) => s.value);
  try {
    const refused = starts.find((s) => s.status === "rejected");
    if (refused) throw refused.reason;
    const answer = await actors[0].request("sign-in");
    if (!answer.ok) throw new Error(`sign-in failed: ${answer.error.code}`);
    for (const actor of actors) await actor.request("call");
    return actors;
  } catch (error) {
    await Promise.all(actors.map((actor) => actor.stop()));
    throw error;
  }
}

/** The refreshes the tenant answered ok since the ledger was last cleared. */
async function refreshes(tenant) {
  const ledger = await tenant.ledger();
  return ledger.refreshTokens.flatMap((token) => token.presentations).filter((p) => p.outcome === "ok").length;
}

/** "8.11× one process alone (11 paired rounds: middle half 6.64–10.11×, all 2.85–12.10×; medians 62.2 vs 7.4 ms)". */
function timesOne(c) {
  return `${c.ratio.toFixed(2)}× one process alone (${c.rounds} paired rounds: ${formatSpread(c, "times")}; medians ${c.a.toFixed(1)} vs ${c.b.toFixed(1)} ms)`;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/**
 * "; CPU per process 3.0 vs 5.5 ms (0.55×)": each side's CPU time over all its rounds, divided by rounds
 * and processes; nothing without /proc. A reading of /proc counts 10 ms ticks, so a side whose total is
 * under {@link CPU_MEASURABLE_MS} is given as a bound ("under 4.5 ms"), and then no ratio.
 */
function cpuPerProcess(many, one) {
  if ([...many, ...one].some((t) => t === undefined)) return "";
  const side = (cpus, processes) => {
    const total = sum(cpus);
    const count = cpus.length * processes;
    return total >= CPU_MEASURABLE_MS
      ? { text: (total / count).toFixed(1), per: total / count }
      : { text: `under ${(CPU_MEASURABLE_MS / count).toFixed(1)}` };
  };
  const [a, b] = [side(many, FLEET), side(one, 1)];
  const ratio = a.per !== undefined && b.per !== undefined ? ` (${(a.per / b.per).toFixed(2)}×)` : "";
  return `; CPU per process ${a.text} vs ${b.text} ms${ratio}`;
}

/** "; the fleet's CPU: +42 ms per expiry beyond its floor, all 20 processes": nothing without /proc. */
function fleetCpuAdded(fleet) {
  const { expiry, floor } = fleet;
  if ([...expiry.cpus, ...floor.cpus].some((t) => t === undefined)) return "";
  const added = (sum(expiry.cpus) - sum(floor.cpus)) / expiry.cpus.length;
  return `; the fleet's CPU: ${added >= 0 ? "+" : "−"}${Math.abs(added).toFixed(0)} ms per expiry beyond its floor, all ${FLEET} processes`;
}

/** "+12.5 ms", "−3.0 ms". */
const signedMs = (x) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)} ms`;
/** "12.5", "−3.0": a figure that a noisy round may make negative, with a true minus sign. */
const plain = (x) => `${x < 0 ? "−" : ""}${Math.abs(x).toFixed(1)}`;

const where = (storage) => ({ file: "one token file", redis: "one Redis", postgres: "one PostgreSQL" })[storage];

/**
 * The services `storages` need ("file", "redis", "postgres"): a token directory, a redis-server, a
 * PostgreSQL; `storageFor(storage, name)` gives group `name` a session of its own on one of them
 * (its own token file, Redis prefix or table). `close()` stops what was started.
 */
async function startStorages(storages) {
  const dir = mkdtempSync(join(tmpdir(), "bench-fleet-"));
  const started = {};
  try {
    if (storages.includes("redis")) started.redis = await startRedis({ command: findRedisServer().command });
    if (storages.includes("postgres")) started.postgres = await startPostgresService();
  } catch (error) {
    await started.redis?.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const slug = (name) => name.replace(/\W/g, "_").toLowerCase();
  return {
    async storageFor(storage, name) {
      if (storage === "file") return { kind: "file", path: join(dir, slug(name), "tokens.json") };
      if (storage === "redis") return { kind: "redis", url: started.redis.url, prefix: `bench-${slug(name)}:` };
      return {
        kind: "postgres",
        url: started.postgres.url,
        table: await started.postgres.table(`bench_${slug(name)}`),
      };
    },
    async close() {
      await started.redis?.close();
      await started.postgres?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Releases every group of `groups` (name → { target, size, storage }: `size` actors of `target` on a
 * session of their own on `storage`, "file", "redis" or "postgres") in the same rounds: one untimed
 * round, then ROUNDS; each releases every group with a fresh token (the floor), in a random order,
 * then moves the clock past expiry and releases every group again, in a random order. Per group: the
 * floor's and the expiry's wall and CPU times, and the refreshes the tenant answered per expiry,
 * round by round.
 */
async function runRounds(groups) {
  const names = Object.keys(groups);
  const storages = await startStorages([...new Set(names.map((name) => groups[name].storage))]);
  const actors = {};
  let tenant;
  try {
    tenant = await startSandbox([{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }]);
    for (const [i, name] of names.entries()) {
      const { target, storage, size } = groups[name];
      actors[name] = await fleetOf(tenant, target, await storages.storageFor(storage, name), size, `g${i}-`);
    }
    const runs = Object.fromEntries(
      names.map((name) => [name, { floor: { walls: [], cpus: [] }, expiry: { walls: [], cpus: [] }, refreshes: [] }]),
    );
    for (let round = 0; round <= ROUNDS; round++) {
      const results = [];
      for (const name of shuffled(names)) {
        await tenant.reset();
        results.push([name, "floor", await release(actors[name], `${name} (fresh token)`)]);
        const extra = await refreshes(tenant);
        if (extra !== 0) throw new Error(`${name} refreshed ${extra} times with a fresh token`);
      }
      await tenant.advance(EXPIRE_SECONDS);
      await Promise.all(
        Object.values(actors)
          .flat()
          .map((actor) => actor.request("clock", { offsetMs: tenant.offsetMs })),
      );
      const counts = {};
      for (const name of shuffled(names)) {
        await tenant.reset();
        results.push([name, "expiry", await release(actors[name], `${name} (after expiry)`)]);
        counts[name] = await refreshes(tenant);
      }
      // The untimed round: no timed round pays a process's first refresh.
      if (round === 0) continue;
      for (const [name, kind, { wall, cpu }] of results) {
        runs[name][kind].walls.push(wall);
        runs[name][kind].cpus.push(cpu);
      }
      for (const name of names) runs[name].refreshes.push(counts[name]);
    }
    return runs;
  } finally {
    for (const group of Object.values(actors)) await Promise.all(group.map((actor) => actor.stop()));
    await tenant?.close();
    await storages.close();
  }
}

/** The name of a group: its storage, its kit, its side ("many", "one", "oneAgain", "manyAgain"). */
const groupName = (storage, target, side) => `${storage} ${target} ${side}`;

/** The groups of one kit's rows on `storage`: its fleet, one process alone, and a second one alone (the A/A). */
const kitGroups = (target, storage) => {
  const lone = target === "mixed" ? "node" : target;
  return {
    [groupName(storage, target, "many")]: { target, storage, size: FLEET },
    [groupName(storage, target, "one")]: { target: lone, storage, size: 1 },
    [groupName(storage, target, "oneAgain")]: { target: lone, storage, size: 1 },
  };
};

/** Per round: what the refresh added to `side`'s wall (after expiry less its floor), in ms. */
const added = (side) => side.expiry.walls.map((wall, i) => wall - side.floor.walls[i]);

/** Per round: (fleet after expiry − its floor) − (one after expiry − its floor), in ms. */
const coordination = (fleet, one) => pairedDifference(added(fleet), added(one));

/**
 * Three rows for `target` on `storage` from `runs`: the fleet after expiry against one alone (goal:
 * within 5× and one refresh per expiry), its floor, and what coordination itself costs; each with its
 * A/A, the second lone process in place of the first (of the fleet, for the coordination cost).
 */
function kitRows(target, storage, runs) {
  const [many, one, oneAgain] = ["many", "one", "oneAgain"].map((side) => runs[groupName(storage, target, side)]);
  const fleet = `${FLEET} ${LABELS[target]} processes on ${where(storage)}`;
  const lone = `one ${LABELS[target === "mixed" ? "node" : target]} process against another`;
  const counts = many.refreshes;
  const oneRefreshEach = [many, one, oneAgain].every((side) => side.refreshes.every((n) => n === 1));
  const expiry = paired(many.expiry.walls, one.expiry.walls);
  const fleetRow = judgedRow({
    metric: `${fleet} all hold a token after expiry`,
    value: `${timesOne(expiry)}${cpuPerProcess(many.expiry.cpus, one.expiry.cpus)}; refreshes per expiry: ${counts.every((n) => n === 1) ? `1 in each of ${counts.length} rounds` : counts.join(", ")}`,
    c: expiry,
    aa: paired(oneAgain.expiry.walls, one.expiry.walls),
    aaLabel: lone,
    style: "times",
    goal: { atMost: FLEET_GOAL },
    goalText: `1 refresh per expiry; within ${FLEET_GOAL}× one process`,
  });
  // One refresh per expiry is exact: any other count misses the goal, whatever the times say.
  if (!oneRefreshEach) Object.assign(fleetRow, { verdict: "missed", met: false });
  const floor = paired(many.floor.walls, one.floor.walls);
  const cost = coordination(many, one);
  return [
    fleetRow,
    judgedRow({
      metric: `${fleet}, floor: the same with a fresh token (no refresh)`,
      value: `${timesOne(floor)}${cpuPerProcess(many.floor.cpus, one.floor.cpus)}`,
      c: floor,
      aa: paired(oneAgain.floor.walls, one.floor.walls),
      aaLabel: lone,
      style: "times",
    }),
    judgedRow({
      metric: `${fleet}, what coordination costs: (fleet after expiry − its floor) − (one after expiry − its floor)`,
      value: `${signedMs(cost.difference)} (${cost.rounds} paired rounds: ${formatSpread(cost, "ms")}); the refresh added ${plain(cost.a)} ms to the fleet's wall and ${plain(cost.b)} ms to one process's (medians of the rounds' differences)${fleetCpuAdded(many)}`,
      c: cost,
      aa: coordination(oneAgain, one),
      aaLabel: "a second lone process in place of the fleet",
      style: "ms",
    }),
  ];
}

/** `kit`'s coordination cost less Go's, round by round, with the second Go fleet's less the first's as its A/A (goal: ≤ 0 ms). */
function versusGoRow(kit, storage, runs) {
  const cost = (target, fleet = "many", one = "one") =>
    coordination(runs[groupName(storage, target, fleet)], runs[groupName(storage, target, one)]);
  const go = cost("go");
  const c = pairedDifference(cost(kit).values, go.values);
  return judgedRow({
    metric: `coordination cost on ${where(storage)}: ${FLEET} ${LABELS[kit]} processes against ${FLEET} Go processes (each kit's (fleet − floor) − (one − floor), paired by round)`,
    value: `${signedMs(c.difference)} (${c.rounds} paired rounds: ${formatSpread(c, "ms")}; medians ${plain(c.a)} vs ${plain(c.b)} ms)`,
    c,
    aa: pairedDifference(cost("go", "manyAgain", "oneAgain").values, go.values),
    aaLabel: "a second Go fleet against the first",
    style: "ms",
    goal: { atMost: 0 },
    goalText: "within Go's (≤ +0 ms)",
  });
}

/** Two rows that say why `target`'s rows are missing. */
function leftOut(target, storage, why) {
  const fleet = `${FLEET} ${LABELS[target]} processes on ${where(storage)}`;
  const value = why.startsWith("not measured") ? why : `left out: ${why}`;
  return [
    { metric: `${fleet} all hold a token after expiry`, value, goal: "", met: null },
    { metric: `${fleet}, what coordination costs`, value, goal: "", met: null },
  ];
}

/** Why `target`'s actors cannot run here, or undefined. */
function missing(target) {
  const commands = defaultCommands();
  const absent = (target === "mixed" ? ["node", "python"] : [target]).find((kit) => !commands[kit]);
  if (absent === undefined) return undefined;
  return absent === "go"
    ? "the Go actor is not built (the Go package's build)"
    : "the repository's Python venv is missing (node tools/python/venv.mjs)";
}

/** Why nothing can run on `storage` here (its server is not installed), or undefined. */
function storageMissing(storage) {
  if (storage === "redis" && !findRedisServer()) return "redis-server is not installed";
  if (storage === "postgres" && !findPostgres())
    return "PostgreSQL is not installed (apt-get install -y postgresql, or POSTGRES_BIN_DIR naming its bin directory)";
  return undefined;
}

/**
 * Why `target` has no fleet on `storage` on this commit (its kit has no such storage: the conformance
 * suite's TARGETS, which lists what each kit's actor drives), or undefined.
 */
function unsupported(target, storage) {
  if (TARGETS[target]?.includes(storage)) return undefined;
  return `not measured: no ${LABELS[target]} ${storage === "postgres" ? "PostgreSQL" : storage} storage on this commit (its conformance actor has none: TARGETS in tools/conformance/src/suite/scenarios.mjs)`;
}

/**
 * Every kit's fleet on each of `storages`, all in the same rounds (TypeScript, Python, Go, and a
 * second Go fleet per storage): each kit's three rows per storage, then, per storage, each other
 * kit's coordination cost against Go's. A kit without a storage (Python on PostgreSQL before its
 * storage lands) gets rows saying so; one whose actor is missing here, rows saying why. With
 * `sameKits`, only the kits that have every storage of `storages` run, on each (PostgreSQL beside
 * Redis: the kits with a PostgreSQL storage), and the others are said once, for the first storage.
 *
 * @param {("file" | "redis" | "postgres")[]} storages
 * @param {{ sameKits?: boolean }} [options]
 */
export async function kitFleets(storages, { sameKits = false } = {}) {
  const rows = [];
  const groups = {};
  const plan = [];
  const everywhere = (kit) => storages.every((storage) => !unsupported(kit, storage));
  for (const [i, storage] of storages.entries()) {
    const absent = storageMissing(storage);
    if (absent) {
      rows.push(...KITS.flatMap((kit) => leftOut(kit, storage, absent)));
      continue;
    }
    const kits = KITS.filter((kit) => !missing(kit) && !unsupported(kit, storage) && (!sameKits || everywhere(kit)));
    // With sameKits, a kit left out everywhere is said once, for the first storage.
    const said = sameKits && i > 0 ? KITS.filter((kit) => !missing(kit) && !everywhere(kit)) : [];
    Object.assign(groups, ...kits.map((kit) => kitGroups(kit, storage)));
    if (kits.includes("go")) groups[groupName(storage, "go", "manyAgain")] = { target: "go", storage, size: FLEET };
    plan.push({ storage, kits, said });
  }
  const runs = plan.length > 0 ? await runRounds(groups) : {};
  for (const { storage, kits, said } of plan) {
    const skipped = KITS.filter((kit) => !kits.includes(kit) && !said.includes(kit)).flatMap((kit) =>
      leftOut(kit, storage, missing(kit) ?? unsupported(kit, storage) ?? unsupported(kit, storages[0])),
    );
    const versusGo = kits.includes("go")
      ? kits.filter((kit) => kit !== "go").map((kit) => versusGoRow(kit, storage, runs))
      : [
          {
            metric: `coordination cost on ${where(storage)} against Go`,
            value: `left out: ${missing("go") ?? unsupported("go", storage)}`,
            goal: "",
            met: null,
          },
        ];
    rows.push(...kits.flatMap((kit) => kitRows(kit, storage, runs)), ...skipped, ...versusGo);
  }
  return rows;
}

/**
 * One kit's rows alone (or "mixed": TypeScript and Python in turn, against one TypeScript process):
 * its fleet after expiry against one alone, its floor and its coordination cost, each with its A/A.
 *
 * @param {"node" | "python" | "go" | "mixed"} target
 * @param {"file" | "redis" | "postgres"} storage
 */
export async function fleet(target, storage) {
  const why = missing(target) ?? storageMissing(storage);
  if (why) return leftOut(target, storage, why);
  return kitRows(target, storage, await runRounds(kitGroups(target, storage)));
}

/**
 * The fleet rows: every kit on a token file, then on Redis, then TypeScript and Python mixed on Redis;
 * or one part by name. `postgres` (its own section in bench.mjs): every kit with a PostgreSQL storage
 * on PostgreSQL and on Redis in the same rounds, so that the two storages are compared round by round.
 *
 * @param {"file" | "redis" | "mixed" | "postgres"} [only]
 */
export async function fleets(only) {
  const parts = {
    file: () => kitFleets(["file"]),
    redis: () => kitFleets(["redis"]),
    mixed: () => fleet("mixed", "redis"),
  };
  if (only === "postgres") return kitFleets(["postgres", "redis"], { sameKits: true });
  const rows = [];
  for (const [name, run] of Object.entries(parts)) if (!only || only === name) rows.push(...(await run()));
  return rows;
}

// `node tools/bench/fleets.mjs [file|redis|mixed|postgres] [--quick]` prints the rows alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await fleets(process.argv.slice(2).find((a) => !a.startsWith("--")))) console.log(rowLine(row));
}
