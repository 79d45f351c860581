// Scenarios: read from spec/conformance/scenarios/*.yaml, checked against scenario.schema.json and
// the rules a schema cannot say, and expanded into runs (scenario × storage × actor mix × parameter).
// A bad file is refused before anything starts, with its path, line and field.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import { LineCounter, parseDocument } from "yaml";

/** The repository's root. */
export const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
/** Where the scenarios and their schema live: beside the contract. */
export const SPEC_DIR = join(REPO, "spec", "conformance");
export const SCENARIO_DIR = join(SPEC_DIR, "scenarios");

/** The targets, and the storages each can run on. */
export const TARGETS = {
  node: ["memory", "file", "redis", "redis-cluster", "postgres"],
  python: ["memory", "file", "redis", "redis-cluster", "postgres"],
  "python-async": ["memory", "file", "redis", "redis-cluster", "postgres"],
  browser: ["web"],
  go: ["memory", "file", "redis", "redis-cluster", "postgres"],
  java: ["memory", "file", "redis", "redis-cluster", "postgres"],
};

/**
 * The features beyond the refresh protocol, and the targets whose actor declares each (its ready
 * event's `features`, PROTOCOL.md). A scenario that needs a feature runs only on those targets; the
 * others are listed as not run, with why. `sessions`: a server's many sessions (a scenario with
 * `sessions`), driven by each kit's sessions object (TypeScript `createSessions`, Python `Sessions`
 * and `AsyncSessions`, Go `tokenmanager.Sessions`, Java `Sessions`); a browser tab has none.
 */
export const FEATURES = {
  sessions: ["node", "python", "python-async", "go", "java"],
};

/** Why a target does not run a scenario needing a feature its actor does not declare. */
const WHY_NOT = {
  sessions: "its actor does not declare the sessions feature (yet)",
};

/**
 * Runs left out of the reduced geometry (`pnpm test`) while a failure of a kit in them is open and
 * not yet explained, each with why: listed as not run with the reason, never dropped in silence, and
 * still run by `pnpm conformance --full` (where they show the failure). Remove an entry with its fix.
 */
export const KNOWN_FAILURES = [];

/** Whether `run` (its scenario, storage and mix) is left out at `geometry` for a known failure. */
function knownFailure(run, geometry) {
  return (
    geometry === "reduced" &&
    KNOWN_FAILURES.some((k) => k.scenario === run.scenario && k.storage === run.storage && k.mix === run.mix)
  );
}

/**
 * Targets whose every actor process is too slow to start for the whole column to fit `pnpm test`'s
 * time (a JVM per process): at the reduced geometry such a target runs alone only the scenarios
 * named here; its other runs alone are listed as not run, with why, and run by `pnpm conformance
 * --full`. Every target still joins every mixed run with a process for every target, and the
 * mixed runs with fewer processes in turn ({@link mixTargets}).
 */
export const REDUCED_SUBSETS = {
  // many-sessions and many-sessions-file stay out: alone they took 34–136 s a run here (50 sessions,
  // 5 JVMs; tools/conformance/actors/java/README.md); Java joins their mixed runs.
  java: {
    scenarios: [
      "fleet-after-expiry",
      "holder-paused",
      "holder-killed-after-rotation",
      "redis-outage-past-intent-wait",
      "disk-outage-past-intent-wait",
      "cluster-failover",
      "intent-unwritable",
    ],
    why: "a JVM starts for each actor process, so the whole Java column would take CI longer than its budget; at the reduced geometry Java runs alone the fleet, pause, kill-after-rotation, outage, failover and intent-unwritable scenarios (and joins the mixed runs with a process for every target), and `--full` runs the rest",
  },
};

/** Whether a run of `mix` alone in `scenario` is left out at `geometry` by {@link REDUCED_SUBSETS}. */
function outsideSubset(scenario, mix, geometry) {
  const subset = REDUCED_SUBSETS[mix];
  return geometry === "reduced" && subset !== undefined && !subset.scenarios.includes(scenario);
}

/** The features a scenario needs. */
export function needs(scenario) {
  return scenario.sessions === undefined ? [] : ["sessions"];
}

/** Whether a target's actor declares every feature the scenario needs. */
function declares(target, scenario) {
  return needs(scenario).every((feature) => FEATURES[feature].includes(target));
}

/**
 * The targets a scenario would run on but whose actor lacks a feature it needs, one entry per
 * scenario: `{ scenario, targets, why }` (none when every target can run it); and, at the reduced
 * geometry, the runs {@link KNOWN_FAILURES} leaves out.
 *
 * @param {object[]} scenarios
 * @param {string[]} [targets] the targets present here
 */
export function notRun(scenarios, targets = Object.keys(TARGETS), geometry = "reduced") {
  const known =
    geometry === "reduced"
      ? KNOWN_FAILURES.filter(
          (k) => targets.includes(k.mix) && scenarios.some((scenario) => scenario.name === k.scenario),
        ).map((k) => ({ scenario: k.scenario, targets: [k.mix], why: `on ${k.storage}: ${k.why}` }))
      : [];
  const subsets = geometry === "reduced" ? outsideSubsets(scenarios, targets) : [];
  return [...lackingFeatures(scenarios, targets), ...known, ...subsets];
}

/** The entries of {@link notRun} for the runs alone that {@link REDUCED_SUBSETS} leaves out. */
function outsideSubsets(scenarios, targets) {
  return Object.entries(REDUCED_SUBSETS)
    .filter(([target]) => targets.includes(target))
    .flatMap(([target, subset]) =>
      scenarios
        .filter((scenario) => outsideSubset(scenario.name, target, "reduced") && runsAlone(scenario, target))
        .map((scenario) => ({ scenario: scenario.name, targets: [target], why: subset.why })),
    );
}

/** Whether `target` would run `scenario` alone (its storages, its targets, the features it needs). */
function runsAlone(scenario, target) {
  return (
    scenario.storages.some((storage) => TARGETS[target]?.includes(storage)) &&
    declares(target, scenario) &&
    scenario.targets.some((entry) => entry === "each" || entry === target)
  );
}

/** The entries of {@link notRun} for targets whose actor lacks a feature a scenario needs. */
function lackingFeatures(scenarios, targets) {
  return scenarios.flatMap((scenario) => {
    const able = targets.filter(
      (target) =>
        scenario.storages.some((storage) => TARGETS[target]?.includes(storage)) && !declares(target, scenario),
    );
    const named = scenario.targets.filter((entry) => entry !== "each" && entry !== "mixed");
    const left = scenario.targets.some((entry) => entry === "each" || entry === "mixed")
      ? able
      : able.filter((target) => named.includes(target));
    if (left.length === 0) return [];
    return [
      {
        scenario: scenario.name,
        targets: left,
        why: needs(scenario)
          .map((f) => WHY_NOT[f])
          .join("; "),
      },
    ];
  });
}

/** Timing defaults (ms), for names a scenario does not set. */
const DEFAULT_TIMING = { waitBoundMs: 30_000 };

/** A scenario file that cannot run: names the file, the line and the field. */
export class ScenarioError extends Error {
  name = "ScenarioError";
  /**
   * @param {string} file
   * @param {number | undefined} line
   * @param {string} field a JSON pointer into the scenario, e.g. /steps/3/arm/point
   * @param {string} why
   */
  constructor(file, line, field, why) {
    super(`${relative(process.cwd(), file) || file}${line ? `:${line}` : ""}: ${field || "(the scenario)"}: ${why}`);
    this.file = file;
    this.line = line;
    this.field = field;
  }
}

let validator;
function validate() {
  if (!validator) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    validator = ajv.compile(JSON.parse(readFileSync(join(SPEC_DIR, "scenario.schema.json"), "utf8")));
  }
  return validator;
}

/** The line of the node at a JSON pointer (or of its nearest ancestor that exists). */
function lineOf(doc, counter, pointer, key) {
  const path = pointer
    .split("/")
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part.replace(/~1/g, "/").replace(/~0/g, "~")));
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    if (!node?.range) continue;
    if (key !== undefined && depth === path.length && Array.isArray(node.items)) {
      const pair = node.items.find((item) => item.key?.value === key);
      if (pair?.key?.range) return counter.linePos(pair.key.range[0]).line;
    }
    return counter.linePos(node.range[0]).line;
  }
  return undefined;
}

/** The most useful of ajv's errors: the deepest, and not a oneOf summary when a branch said more. */
function bestError(errors) {
  const depth = (e) => e.instancePath.split("/").length + (e.keyword === "additionalProperties" ? 1 : 0);
  return [...errors].sort((a, b) => depth(b) - depth(a) || (a.keyword === "oneOf") - (b.keyword === "oneOf"))[0];
}

function describeError(error) {
  switch (error.keyword) {
    case "additionalProperties":
      return { key: error.params.additionalProperty, why: `unknown field "${error.params.additionalProperty}"` };
    case "enum":
      return { why: `must be one of ${error.params.allowedValues.join(", ")}` };
    case "required":
      return { why: `missing "${error.params.missingProperty}"` };
    default:
      return { why: error.message ?? error.keyword };
  }
}

/** The step kinds and where a scenario's steps name actors, timings and parameters, for the rules below. */
function* walkSteps(steps, pointer = "/steps") {
  for (const [index, step] of steps.entries()) {
    const [kind, body] = Object.entries(step)[0];
    const at = `${pointer}/${index}/${kind}`;
    yield { kind, body, at };
    if (kind === "repeat") yield* walkSteps(body.steps, `${at}/steps`);
  }
}

function smallest(scaled) {
  return typeof scaled === "number" ? scaled : Math.min(scaled.reduced, scaled.full);
}

function largest(scaled) {
  return typeof scaled === "number" ? scaled : Math.max(scaled.reduced, scaled.full);
}

/** The most sessions a run may have: the sandbox makes at most 10 000 users. */
const MAX_SESSIONS = 10_000;

/** Whether every storage of the scenario is a Redis (a single server or a cluster), which redis steps act on. */
function onRedisOnly(scenario) {
  return scenario.storages.every((storage) => storage === "redis" || storage === "redis-cluster");
}

/** The storages whose writes of a session's records a `records` step can refuse (steps.mjs). */
const RECORDS_STORAGES = new Set(["file", "redis", "redis-cluster", "postgres"]);

/** The redis steps that need a cluster with replicas. */
const REPLICA_STEPS = new Set(["failover", "stay-down"]);

/** The rules of the `redis` options and steps: what each needs of the scenario's storages. */
function checkRedisRules(scenario, kind, body, at, fail) {
  if (kind !== "redis") return;
  if (body === "restart" && !scenario.redis?.appendonly)
    fail(at, undefined, "redis: restart needs redis: { appendonly: true }, or the restart loses everything by design");
  if (!onRedisOnly(scenario))
    fail(
      at,
      undefined,
      "redis steps apply to redis and redis-cluster storage only: give the scenario storages: [redis, redis-cluster]",
    );
  if (REPLICA_STEPS.has(body) && !(scenario.redis?.replicas >= 1))
    fail(at, undefined, `redis: ${body} needs a cluster with replicas: give the scenario redis: { replicas: 1 }`);
}

/** The rules a schema cannot say. Throws ScenarioError at the first broken one. */
function checkRules(scenario, fail) {
  const actors = smallest(scenario.actors);
  const params = scenario.parameters ?? {};
  const timing = { ...DEFAULT_TIMING, ...scenario.timing };
  if (scenario.storages.includes("memory") && actors > 1)
    fail("/actors", undefined, "memory storage keeps tokens in one process: at most 1 actor");
  const browserStorages = scenario.storages.filter((s) => s === "web");
  if (browserStorages.length > 0 && scenario.storages.length > browserStorages.length)
    fail("/storages", undefined, "web runs only on browser tabs: give it a scenario of its own");
  if (scenario.sessions !== undefined && (smallest(scenario.sessions) < 1 || largest(scenario.sessions) > MAX_SESSIONS))
    fail(
      "/sessions",
      undefined,
      `a run has 1 to ${MAX_SESSIONS} sessions, each signed in as a sandbox user of its own`,
    );
  if (scenario.expect.outcome === "ended" && !scenario.expect.code)
    fail("/expect", "outcome", "an ended outcome names the code every actor reports");
  if (scenario.redis?.appendonly && !onRedisOnly(scenario))
    fail("/redis", "appendonly", "an append-only Redis applies to redis and redis-cluster storage only");
  if (scenario.redis?.replicas && scenario.storages.some((storage) => storage !== "redis-cluster"))
    fail(
      "/redis",
      "replicas",
      "replicas apply to redis-cluster storage only: give the scenario storages: [redis-cluster]",
    );
  const armed = new Set();
  const used = new Set();
  const scan = (value, at) => {
    for (const [, name] of String(value).matchAll(/\$\{([a-z-]+)\}/g)) {
      if (!(name in params))
        fail(
          at,
          undefined,
          `\${${name}} is not a parameter of the scenario (parameters: ${Object.keys(params).join(", ") || "none"})`,
        );
      used.add(name);
    }
  };
  for (const { kind, body, at } of walkSteps(scenario.steps)) {
    for (const [field, value] of Object.entries(body ?? {})) {
      if (typeof value === "string") scan(value, `${at}/${field}`);
    }
    if (typeof body === "string") scan(body, at);
    if (kind === "sleep") {
      if (!(body in timing))
        fail(at, undefined, `"${body}" is not a duration of timing (${Object.keys(timing).join(", ")})`);
    }
    const indexes = typeof body?.actor === "number" ? [body.actor] : Array.isArray(body?.actors) ? body.actors : [];
    for (const index of indexes) {
      if (index >= actors)
        fail(
          `${at}/${typeof body.actor === "number" ? "actor" : "actors"}`,
          undefined,
          `actor ${index} does not exist: the scenario has ${actors} (0 to ${actors - 1})`,
        );
    }
    if (kind === "arm") armed.add(body.actor);
    if (kind === "wait-for" && !armed.has(body.actor))
      fail(`${at}/actor`, undefined, `actor ${body.actor} has no armed fault to wait for (arm it in an earlier step)`);
    checkRedisRules(scenario, kind, body, at, fail);
    if (kind === "postgres" && scenario.storages.some((s) => s !== "postgres"))
      fail(at, undefined, "postgres steps apply to postgres storage only: give the scenario storages: [postgres]");
    if ((kind === "refuse-ids" || kind === "replay-callback") && scenario.sessions === undefined)
      fail(at, undefined, `${kind} acts on a server's sessions: give the scenario sessions`);
    if (kind === "records" && scenario.storages.some((s) => !RECORDS_STORAGES.has(s)))
      fail(at, undefined, "records steps apply to file, redis, redis-cluster and postgres storage only");
    if (kind === "disk" && scenario.storages.some((s) => s !== "file"))
      fail(at, undefined, "disk steps apply to file storage only: give the scenario storages: [file]");
  }
  for (const name of Object.keys(params))
    if (!used.has(name)) fail(`/parameters/${name}`, undefined, `parameter "${name}" is never used in a step`);
}

/**
 * Reads and checks one scenario file.
 *
 * @param {string} file
 * @returns {object} the scenario
 * @throws {ScenarioError} naming the file, the line and the field
 */
export function loadScenario(file) {
  const text = readFileSync(file, "utf8");
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const error = doc.errors[0];
    throw new ScenarioError(file, error.linePos?.[0]?.line, "", `not valid YAML: ${error.message.split("\n")[0]}`);
  }
  const scenario = doc.toJS();
  const fail = (pointer, key, why) => {
    throw new ScenarioError(file, lineOf(doc, counter, pointer, key), key ? `${pointer}/${key}` : pointer, why);
  };
  const check = validate();
  if (!check(scenario)) {
    const error = bestError(check.errors);
    const { key, why } = describeError(error);
    fail(error.instancePath || "", key, why);
  }
  if (`${scenario.name}.yaml` !== basename(file))
    fail("/name", undefined, `the file of scenario "${scenario.name}" must be named ${scenario.name}.yaml`);
  checkRules(scenario, fail);
  return scenario;
}

/** Every scenario of a folder (default: spec/conformance/scenarios), in name order. */
export function loadScenarios(dir = SCENARIO_DIR) {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".yaml"))
    .sort()
    .map((name) => loadScenario(join(dir, name)));
}

/** A scaled value at a geometry. */
export function at(scaled, geometry) {
  return typeof scaled === "number" ? scaled : scaled[geometry];
}

function substitute(value, params) {
  if (typeof value === "string") {
    const whole = value.match(/^\$\{([a-z-]+)\}$/);
    if (whole) return /^\d+$/.test(params[whole[1]]) ? Number(params[whole[1]]) : params[whole[1]];
    return value.replace(/\$\{([a-z-]+)\}/g, (_, name) => params[name]);
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, params));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, params)]));
  return value;
}

/** A step (or any value in it) with every scaled value ({reduced, full}) at the geometry. */
function scaleSteps(value, geometry) {
  if (Array.isArray(value)) return value.map((item) => scaleSteps(item, geometry));
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value);
  if (keys.length === 2 && "reduced" in value && "full" in value) return value[geometry];
  return Object.fromEntries(keys.map((key) => [key, scaleSteps(value[key], geometry)]));
}

function combinations(params) {
  let out = [{}];
  for (const [name, values] of Object.entries(params))
    out = out.flatMap((combo) => values.map((value) => ({ ...combo, [name]: value })));
  return out;
}

/**
 * The target of each of a run's `actors` processes: the mix's targets in turn, from the `offset`-th
 * (TARGETS' order). A fleet with a process for every target has every target (the first ones twice
 * when it has more processes than targets); a smaller one has `actors` consecutive targets, which
 * rotate by run ({@link rotation}), so that a target late in TARGETS' order (Java) joins the small
 * mixed fleets too, not only the ones with a process for every target.
 *
 * @param {string[]} mix
 * @param {number} actors
 * @param {number} offset
 */
export function mixTargets(mix, actors, offset) {
  const start = actors >= mix.length ? 0 : offset % mix.length;
  return Array.from({ length: actors }, (_, i) => mix[(start + i) % mix.length]);
}

/**
 * Where a mixed run's targets start: the FNV-1a hash (32 bits) of the scenario's name, plus
 * `actors` for each mixed run of the scenario before it (its storages, then parameters, in the
 * file's order). Deterministic: the same run always has the same targets, whatever runs a command
 * line keeps; spread over the scenarios, so that each target joins about `actors / targets` of the
 * small mixed runs.
 *
 * @param {string} name the scenario's name
 * @param {number} index the run's index among the scenario's mixed runs
 * @param {number} actors the run's processes
 */
export function rotation(name, index, actors) {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(name, "utf8")) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash + index * actors;
}

/**
 * The runs of a scenario: one per storage, actor mix and parameter combination.
 *
 * @param {object} scenario
 * @param {{ geometry?: "reduced" | "full", targets?: string[] }} [options] the targets present here
 */
export function expand(scenario, { geometry = "reduced", targets = Object.keys(TARGETS) } = {}) {
  const runs = [];
  const timing = Object.fromEntries(
    Object.entries({ ...DEFAULT_TIMING, ...scenario.timing }).map(([name, value]) => [name, at(value, geometry)]),
  );
  const actors = at(scenario.actors, geometry);
  let mixed = 0; // the scenario's mixed runs so far, for the rotation of mixTargets
  for (const storage of scenario.storages) {
    const able = Object.keys(TARGETS).filter(
      (target) => TARGETS[target].includes(storage) && declares(target, scenario),
    );
    const mixes = [];
    for (const entry of scenario.targets) {
      if (entry === "each") mixes.push(...able.map((target) => [target]));
      else if (entry === "mixed") {
        if (able.length > 1) mixes.push(able);
      } else if (able.includes(entry)) mixes.push([entry]);
    }
    for (const mix of mixes) {
      const present = mix.every((target) => targets.includes(target));
      for (const params of combinations(scenario.parameters ?? {})) {
        // Counted before any run is left out, so that a run's targets never depend on the others.
        const offset = mix.length > 1 ? rotation(scenario.name, mixed++, actors) : 0;
        if (!present) continue;
        const label = Object.entries(params)
          .map(([k, v]) => `${k}=${v}`)
          .join(",");
        if (knownFailure({ scenario: scenario.name, storage, mix: mix.length > 1 ? "mixed" : mix[0] }, geometry))
          continue;
        if (mix.length === 1 && outsideSubset(scenario.name, mix[0], geometry)) continue;
        runs.push({
          id: [scenario.name, storage, mix.length > 1 ? "mixed" : mix[0], label].filter(Boolean).join(" / "),
          scenario: scenario.name,
          summary: scenario.summary,
          storage,
          mix: mix.length > 1 ? "mixed" : mix[0],
          actorTargets: mixTargets(mix, actors, offset),
          sessions: scenario.sessions === undefined ? 0 : at(scenario.sessions, geometry),
          params,
          geometry,
          timing,
          skewMs: scenario.clock?.skewMs ?? [0],
          // A run that stops or kills Redis has a redis-server (or cluster) of its own, so other lanes keep theirs.
          // So does one whose records steps change its ACL.
          redis: {
            ...scenario.redis,
            own:
              Boolean(scenario.redis?.appendonly || scenario.redis?.replicas) ||
              [...walkSteps(scenario.steps)].some(
                (s) => s.kind === "redis" || (s.kind === "records" && storage.startsWith("redis")),
              ),
          },
          // A run that stops or kills PostgreSQL has a server of its own too.
          postgres: { own: [...walkSteps(scenario.steps)].some((s) => s.kind === "postgres") },
          // A run with disk steps, or records steps on a token file, has a tmpfs of its own for it.
          disk: [...walkSteps(scenario.steps)].some(
            (s) => s.kind === "disk" || (s.kind === "records" && storage === "file"),
          ),
          steps: substitute(scaleSteps(scenario.steps, geometry), params),
          expect: scenario.expect,
          invariants: scenario.invariants,
        });
      }
    }
  }
  return runs;
}
