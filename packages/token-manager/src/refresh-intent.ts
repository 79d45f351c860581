/**
 * The refresh intent (spec/token-store/README.md, "Paused processes", steps 2, 4 and 7; the format is
 * spec/token-store/intent-record.schema.json): stored at `<prefix>intent` right before a refresh
 * request leaves and deleted once its outcome is stored, it says which refresh token (a SHA-256
 * fingerprint, never the token) is being presented, by which refresh (a random id), since when, and,
 * where known, the holder's pid and host. A process about to present the same token waits for it,
 * outside the lock, within a bound. Written only where processes share the storage through a lock
 * of their own. The same module as the Python kit's `_refresh_intent.py`.
 */
import { isString } from "./encoding.js";
import { type ManagerState, store, whereIs } from "./manager-state.js";
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
 * Stores this process's intent to present `refreshToken` (step 4). An unwritable storage (a full disk)
 * must not stop the refresh: the lock still makes it the only one, and the new tokens are kept in
 * memory if their write fails too. Returns the intent, or `undefined` when it could not be written.
 */
export async function writeIntent(state: ManagerState, refreshToken: string): Promise<Intent | undefined> {
  const who = state.identity ? { pid: state.identity.pid, host: state.identity.host } : {};
  const intent: Intent = {
    fingerprint: await fingerprint(refreshToken),
    holder: createState(),
    since: Math.floor(state.now()),
    ...who,
  };
  try {
    await state.storage.set(state.keys.intent, JSON.stringify(intent));
    state.ownIntent = intent;
    return intent;
  } catch {
    state.log?.("intent-unwritable", {});
    return undefined;
  }
}

/** Deletes the intent if it is still `intent` (another holder's is left alone); failures are left to the bound. */
export async function dropIntent(state: ManagerState, intent: Pick<Intent, "holder"> | undefined): Promise<void> {
  if (!intent) return;
  if (state.ownIntent === intent) state.ownIntent = undefined;
  try {
    if ((await readIntent(state))?.holder === intent.holder) await state.storage.delete(state.keys.intent);
  } catch {
    // Left behind, it holds the others back for at most intentWaitMs.
  }
}

/** Whether the intent's holder is a process of this host that has exited. */
const holderGone = (state: ManagerState, intent: Intent): boolean =>
  intent.pid !== undefined && intent.host !== undefined && state.identity?.gone(intent.host, intent.pid) === true;

/**
 * Before presenting `stored`'s refresh token (step 2): the live intent of another refresh with that
 * same token, which must be waited for, or `undefined` to go on. Goes on (with a warning) when the
 * intent's holder is known to have exited, or the intent is older than `intentWaitMs` or has been
 * waited on that long.
 */
export async function blockingIntent(state: ManagerState, stored: TokenRecord): Promise<Intent | undefined> {
  const { log, intentSeen, intentWaitMs } = state;
  const intent = await store(state, () => readIntent(state));
  if (!intent || intent.fingerprint !== (await fingerprint(stored.refresh_token))) return undefined;
  const holder = { pid: intent.pid, host: intent.host };
  if (holderGone(state, intent)) {
    log?.("intent-holder-gone", holder);
    return undefined;
  }
  if (intentSeen.size > 16) intentSeen.clear();
  const first = !intentSeen.has(intent.holder);
  const seen = intentSeen.get(intent.holder) ?? performance.now();
  intentSeen.set(intent.holder, seen);
  const ageMs = state.now() - intent.since;
  const waitedMs = performance.now() - seen;
  if (ageMs >= intentWaitMs || waitedMs >= intentWaitMs) {
    log?.("intent-expired", { ageMs: Math.round(ageMs), waitedMs: Math.round(waitedMs), intentWaitMs, ...holder });
    return undefined;
  }
  if (first) log?.("intent-wait", holder);
  return intent;
}

/**
 * Waits, outside the lock (the intent's holder may need it to write its tokens back), until the
 * record is no longer `recordId`, the intent is no longer `intent`, its holder has exited, or its
 * bound has passed; polled every 50 ms.
 */
export async function awaitIntent(state: ManagerState, { intent, recordId }: IntentPending): Promise<void> {
  const until = (state.intentSeen.get(intent.holder) ?? performance.now()) + state.intentWaitMs;
  while (performance.now() < until) {
    await sleep(50);
    if ((await loadRecord(state, { quiet: true }).catch(() => undefined))?.id !== recordId) return;
    if ((await readIntent(state).catch(() => undefined))?.holder !== intent.holder) return;
    if (holderGone(state, intent)) return;
  }
}
