/**
 * The refresh intent (spec/token-store/README.md, "Paused processes", steps 2, 4 and 7; the format is
 * spec/token-store/intent-record.schema.json): stored at `<prefix>intent` right before a refresh
 * request leaves and deleted once its outcome is stored, it says which refresh token (a SHA-256
 * fingerprint, never the token) is being presented, by which refresh (a random id), since when, and,
 * where known, the holder's pid and host. A process about to present the same token waits for it,
 * outside the lock, until it has itself watched it for `intentWaitMs` with the storage answering
 * (decision D1): an outage of the storage ends a watch, so it never counts as waiting. Written only
 * where processes share the storage through a lock of their own, which hands the manager
 * {@link refreshIntents} (`fileStorage`, `redisStorage`, `postgresStorage` import this module; an app
 * on `webStorage` or `memoryStorage` never bundles it). The same module as the Python kit's
 * `_refresh_intent.py`.
 */
import { isString } from "./encoding.js";
import { fail } from "./errors.js";
import { type HeldLock, LockLost } from "./lock.js";
import { haltBeats, known, type ManagerState, store, whereIs } from "./manager-state.js";
import { sanitize } from "./redact.js";
import { sleep } from "./running-time.js";
import { loadRecord } from "./session.js";
import { createState } from "./state.js";
import { parseJson } from "./token-response.js";
import type { TokenRecord } from "./token-record.js";

/** The refresh intent, as stored. */
export interface Intent {
  readonly fingerprint: string;
  readonly holder: string;
  readonly since: number;
  readonly pid?: number;
  readonly host?: string;
}

/** Thrown inside the lock when another refresh's live intent names the token: the lock is released, the intent waited for, and the lock taken again. */
export class IntentPending extends Error {
  constructor(
    readonly intent: Intent,
    readonly recordId: string,
  ) {
    super("refresh intent pending");
  }
}

/** The lowercase hex SHA-256 of a refresh token: names it in the intent without revealing it. */
export const fingerprint = async (token: string): Promise<string> =>
  Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token))), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");

/**
 * Reads the refresh intent; `undefined` when there is none or it is not an intent record (the
 * format's rule: a value that does not validate reads as absent). Such a value, which this kit did
 * not write, is warned about once, naming where it is; this process's next intent replaces it
 * (DECISIONS D2). A storage that fails (a value of another Redis type: `WRONGTYPE`) rejects.
 */
export async function readIntent(state: ManagerState): Promise<Intent | undefined> {
  const raw = await state.storage.get(state.keys.intent);
  const intent = parseJson(raw) as Partial<Intent>;
  const valid = isString(intent.fingerprint) && isString(intent.holder) && typeof intent.since === "number";
  if (valid) return intent as Intent;
  if (typeof raw === "string" && raw !== state.foreignIntent) {
    state.foreignIntent = raw;
    state.log?.("intent-unreadable", { key: whereIs(state, state.keys.intent) });
  }
  return undefined;
}

/**
 * Stores this process's intent to present `refreshToken` (step 4). No intent, no send (decision D6):
 * an intent that could not be written (any storage error, or a write not confirmed, such as a command
 * timeout) rejects with `STORAGE_FAILED` saying so and why, and the refresh is not sent. Sent under
 * the lock alone, a rotation whose tokens could not be written either would be known only to this
 * process, and another, finding no intent, would present the rotated-away token. An intent the
 * storage may still apply later is deleted again where it can be (another holder's is left alone).
 *
 * @throws a `TokenManagerError` `STORAGE_FAILED`, its cause the storage's error (scrubbed)
 */
export async function writeIntent(state: ManagerState, refreshToken: string): Promise<Intent> {
  const who = state.identity ? { pid: state.identity.pid, host: state.identity.host } : {};
  const intent: Intent = {
    fingerprint: await fingerprint(refreshToken),
    holder: createState(),
    since: Math.floor(state.now()),
    ...who,
  };
  try {
    await state.storage.set(state.keys.intent, JSON.stringify(intent));
  } catch (e) {
    const cause = sanitize(e, known(state, refreshToken));
    state.log?.("intent-unwritable", {});
    await dropIntent(state, intent);
    return fail("STORAGE_FAILED", intentUnwritable(cause.message), cause);
  }
  state.ownIntent = intent;
  startBeat(state, intent);
  return intent;
}

/**
 * The message of a refresh refused because its intent could not be written (D6), the same in every
 * kit: `STORAGE_FAILED: the refresh intent could not be written (<why>), so the refresh was not sent;
 * the stored tokens are unchanged and the next call tries again`.
 */
export const intentUnwritable = (why: string): string =>
  `the refresh intent could not be written (${why}), so the refresh was not sent; the stored tokens are unchanged and the next call tries again`;

/** Deletes the intent if it is still `intent` (another holder's is left alone); failures are left to the bound. */
export async function dropIntent(state: ManagerState, intent: Pick<Intent, "holder"> | undefined): Promise<void> {
  if (!intent) return;
  if (state.ownIntent === intent) state.ownIntent = undefined;
  await stopBeat(state, intent);
  try {
    if ((await readIntent(state))?.holder === intent.holder) await state.storage.delete(state.keys.intent);
  } catch {
    // Left behind, it holds the others back for at most intentWaitMs.
  }
}

/** The longest pause between two beats of an intent (D7); a quarter of `intentWaitMs` when that is shorter. */
export const BEAT_MS = 1_000;

/**
 * This process's beats of its own intent (D7): the timer; whether they were stopped; and the beat under
 * way, if any, with its write once sent (the only part a stop waits for).
 */
export interface IntentBeat {
  readonly holder: string;
  readonly timer: ReturnType<typeof setInterval>;
  running: Promise<void> | undefined;
  stopped: boolean;
  writing: Promise<void> | undefined;
}

/**
 * Starts the beats of `intent` (D7): every {@link BEAT_MS} (a quarter of `intentWaitMs` when shorter)
 * until the intent is dropped (or the manager closed or signed out), this process rewrites it with a
 * new `since`, so that a process waiting for it restarts its watch: a holder that runs is waited for,
 * however slowly the tenant answers. A timer that does not keep a Node process alive.
 */
function startBeat(state: ManagerState, intent: Intent): void {
  void haltBeats(state);
  if (state.closed) return;
  const every = Math.max(1, Math.min(BEAT_MS, Math.floor(state.intentWaitMs / 4)));
  const timer = setInterval(() => {
    const current = state.intentBeat;
    if (current?.timer !== timer || current.running) return;
    current.running = beat(state, intent, current).finally(() => {
      current.running = undefined;
    });
  }, every);
  (timer as { unref?(): void }).unref?.();
  state.intentBeat = { holder: intent.holder, timer, running: undefined, stopped: false, writing: undefined };
}

/**
 * One beat (D7): rewrites the stored intent with a new `since` (later than the one stored), only
 * while it is still this process's own; another holder's intent is never overwritten. A failed beat
 * is no error: the next one tries again. A beat whose read answers after its beats were stopped (the
 * read hung while the intent was dropped) writes nothing.
 */
async function beat(state: ManagerState, intent: Intent, beats: IntentBeat): Promise<void> {
  try {
    const stored = await readIntent(state);
    if (beats.stopped || stored?.holder !== intent.holder || state.ownIntent?.holder !== intent.holder) return;
    const since = Math.max(Math.floor(state.now()), stored.since + 1);
    beats.writing = state.storage.set(state.keys.intent, JSON.stringify({ ...intent, since }));
    await beats.writing;
  } catch {
    state.log?.("intent-beat-failed", {});
  }
}

/**
 * Stops the beats of `intent` without waiting for a beat's read under way (its storage command may
 * hang for the storage's whole command timeout: a Redis node that stopped answering); a beat's write
 * under way is waited for: none rewrites the intent once it is dropped.
 */
async function stopBeat(state: ManagerState, intent: Pick<Intent, "holder">): Promise<void> {
  if (state.intentBeat?.holder !== intent.holder) return;
  await haltBeats(state);
}

/**
 * How far apart, on the monotonic clock, two successful reads of an intent may be and still belong
 * to one watch (D1): more means this process was paused, or was not asking.
 */
export const WATCH_GAP_MS = 1_000;

/**
 * This process's watch of one intent (D1): whose, since when it has read it without a break, and
 * when last; `beat` is the intent's `since` as last read, whose change restarts the watch (D7).
 */
export interface IntentWatch {
  readonly holder: string;
  readonly since: number;
  readonly beat: number;
  last: number;
}

/**
 * A successful read of the storage found `intent`: the watch of its holder goes on, or a new one
 * starts from zero (another holder, no watch, the last read more than {@link WATCH_GAP_MS} ago, or a
 * new `since`: the holder beat, so it lives, D7). Returns how long it has been watched without a
 * break, in ms.
 */
export function watchIntent(state: ManagerState, intent: Intent): number {
  const now = performance.now();
  const current = state.intentWatch;
  if (current?.holder === intent.holder && current.beat === intent.since && now - current.last <= WATCH_GAP_MS) {
    current.last = now;
    return now - current.since;
  }
  state.intentWatch = { holder: intent.holder, since: now, beat: intent.since, last: now };
  return 0;
}

/**
 * A read of the storage failed (an outage, a hung server, a command timeout, an I/O error): the watch
 * ends, and the next read that finds the intent starts a new one from zero (D1). An outage thus never
 * counts as watching: the holder may be alive and writing its tokens again once the storage answers.
 */
export function endWatch(state: ManagerState): void {
  state.intentWatch = undefined;
}

/** Whether `e` says the storage (or its lock) could not be reached: `STORAGE_FAILED`, or a file's own `IO_FAILED`. */
export function isStorageFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === "STORAGE_FAILED" || code === "IO_FAILED";
}

/** Whether the intent's holder is a process of this host that has exited. */
const holderGone = (state: ManagerState, intent: Intent): boolean =>
  intent.pid !== undefined && intent.host !== undefined && state.identity?.gone(intent.host, intent.pid) === true;

/**
 * Before presenting `stored`'s refresh token (step 2): the live intent of another refresh with that
 * same token, which must be waited for, or `undefined` to go on. An intent is live unless its holder
 * is a process of this host that has exited, or this process has itself watched it (the same
 * holder) for `intentWaitMs` without a break (D1); its `since` is logged, never used to give up.
 * Going on is logged as a warning.
 */
export async function blockingIntent(state: ManagerState, stored: TokenRecord): Promise<Intent | undefined> {
  const { log, intentWaitMs } = state;
  let intent: Intent | undefined;
  try {
    intent = await store(state, () => readIntent(state));
  } catch (e) {
    endWatch(state);
    throw e;
  }
  if (!intent || intent.fingerprint !== (await fingerprint(stored.refresh_token))) return undefined;
  const holder = { pid: intent.pid, host: intent.host };
  if (holderGone(state, intent)) {
    log?.("intent-holder-gone", holder);
    return undefined;
  }
  const watching = state.intentWatch?.holder === intent.holder;
  const watchedMs = watchIntent(state, intent);
  if (watchedMs >= intentWaitMs) {
    const ageMs = Math.round(state.now() - intent.since);
    log?.("intent-expired", { watchedMs: Math.round(watchedMs), ageMs, intentWaitMs, ...holder });
    return undefined;
  }
  if (!watching) log?.("intent-wait", holder);
  return intent;
}

/**
 * Waits, outside the lock (the intent's holder may need it to write its tokens back), polling every
 * 50 ms, until the record is no longer `recordId`, the intent is no longer `intent`, its holder has
 * exited, or this process has watched it for `intentWaitMs` without a break. Every poll goes on with
 * the watch (D1); a poll that cannot read the storage ends the watch and the wait, and the caller
 * decides again under the lock (where the storage's typed error reaches the call, as before).
 */
export async function awaitIntent(state: ManagerState, { intent, recordId }: IntentPending): Promise<void> {
  for (;;) {
    await sleep(50);
    let current: Intent | undefined;
    try {
      if ((await loadRecord(state, { quiet: true }))?.id !== recordId) return;
      current = await readIntent(state);
    } catch {
      endWatch(state);
      return;
    }
    if (current?.holder !== intent.holder || holderGone(state, intent)) return;
    if (watchIntent(state, current) >= state.intentWaitMs) return;
  }
}

/**
 * The steps of the refresh protocol that only a storage shared by processes needs, as the manager
 * runs them (see {@link refreshIntents}, the one implementation). An app passes the object on and
 * never calls its methods: they take the manager's internal state.
 */
export interface RefreshIntents {
  /** Step 2, under the lock: rejects when another refresh's live intent names `stored`'s refresh token, to be waited for outside the lock. */
  check(state: ManagerState, stored: TokenRecord): Promise<void>;
  /** Outside the lock: when `error` is the rejection of `check`, waits for that intent and resolves `true`; else `false`. */
  waitOut(state: ManagerState, error: unknown): Promise<boolean>;
  /**
   * Steps 3 and 4, before the refresh leaves: rejects with `LockLost` when `held` is no longer this
   * process's own, then stores this process's intent (no intent, no send: D6).
   */
  write(state: ManagerState, refreshToken: string, held?: HeldLock): Promise<Intent>;
  /**
   * Step 5, right before each attempt leaves: `true` when the stored record is still `stored` and the
   * lock still this process's own; `false` (the intent dropped) when another process stored tokens
   * meanwhile; rejects with `LockLost` (the intent dropped) when the lock is gone.
   */
  stillOurs(state: ManagerState, stored: TokenRecord, intent: Intent | undefined, held?: HeldLock): Promise<boolean>;
  /** Step 7: deletes the intent if it is still `intent`. */
  drop(state: ManagerState, intent: Pick<Intent, "holder"> | undefined): Promise<void>;
  /** A call failed with `error`: a storage that could not be read or locked ends the watch (D1). */
  failed(state: ManagerState, error: unknown): void;
}

/**
 * Step 2 under the lock: throws {@link IntentPending} when another refresh's live intent names
 * `stored`'s refresh token (see {@link blockingIntent}); the lock is then released and the intent
 * waited for outside it ({@link waitOut}).
 */
async function checkIntent(state: ManagerState, stored: TokenRecord): Promise<void> {
  const intent = await blockingIntent(state, stored);
  if (intent) throw new IntentPending(intent, stored.id);
}

/** Outside the lock: when `error` is an {@link IntentPending}, waits for its intent ({@link awaitIntent}) and resolves `true`. */
async function waitOut(state: ManagerState, error: unknown): Promise<boolean> {
  if (!(error instanceof IntentPending)) return false;
  await awaitIntent(state, error);
  return true;
}

/**
 * Steps 3 and 4: the lock still this process's own, checked before the intent is written too (a holder
 * whose lock was taken over while it was paused must not replace the new holder's intent), then
 * {@link writeIntent}.
 *
 * @throws {@link LockLost} when the lock is gone; a `TokenManagerError` `STORAGE_FAILED` when the intent cannot be written
 */
async function claim(state: ManagerState, refreshToken: string, held?: HeldLock): Promise<Intent> {
  if (held && !(await held.isHeld())) throw new LockLost();
  return writeIntent(state, refreshToken);
}

/**
 * Step 5, right before each attempt of the refresh leaves: the stored record is still `stored` (else
 * another process stored tokens meanwhile: `false`, decide again with them) and the lock still this
 * process's own (else {@link LockLost}). Either way the intent is dropped first.
 */
async function stillOurs(
  state: ManagerState,
  stored: TokenRecord,
  intent: Intent | undefined,
  held?: HeldLock,
): Promise<boolean> {
  if ((await loadRecord(state))?.id !== stored.id) {
    await dropIntent(state, intent);
    state.log?.("tokens-changed", {});
    return false;
  }
  if (held && !(await held.isHeld())) {
    await dropIntent(state, intent);
    throw new LockLost();
  }
  return true;
}

/**
 * The refresh intents, as a storage whose lock processes share hands them to the manager
 * (`TokenStorage.refreshIntents`, or the `refreshIntents` option beside a `lock` of your own): the
 * steps of the refresh protocol that only such a storage needs (spec/token-store/README.md, "Paused
 * processes", steps 2, 4 and 7). A manager with such a lock and without them is refused
 * (`INVALID_OPTIONS`): it would refresh without them, and a paused holder could make another process
 * present a rotated-away token.
 *
 * @example
 * ```ts
 * import { refreshIntents, type TokenStorage } from "@tenant-integration/token-manager";
 * const storage: TokenStorage = { ...myStorage, lock: myLock, refreshIntents };
 * ```
 * @see RFC 9700 §4.14.2
 */
export const refreshIntents: RefreshIntents = {
  check: checkIntent,
  waitOut,
  write: claim,
  stillOurs,
  drop: dropIntent,
  failed: (state, error) => {
    // A storage that could not be read or locked ends the watch of another refresh's intent (D1).
    if (isStorageFailure(error)) endWatch(state);
  },
};
