/**
 * Coordination between the tabs of one browser that share `webStorage(localStorage)`: sign-ins,
 * sign-outs and session ends told over a `BroadcastChannel`, and the rotation markers, Web Locks
 * that say a record's refresh token was rotated away (the lock manager is coherent across tabs,
 * unlike `localStorage`, which may lag behind in a tab).
 */
import { type OAuthErrorFields, SessionEndedError } from "./errors.js";
import { emit } from "./events.js";
import type { ManagerState } from "./manager-state.js";
import type { TokenRecord } from "./token-record.js";
import type { SessionInfo } from "./types.js";

/** What the tabs tell each other: the event and what its payload is made from, never a token. */
export type TabMessage =
  | { event: "signed-in"; session: SessionInfo }
  | { event: "signed-out"; revoked: boolean }
  | { event: "session-ended"; status: number; fields: OAuthErrorFields };

/** How long a rotation marker is held: far longer than any tab's storage lags behind. */
const MARKER_MS = 30_000;

/** Fires the event of `message` here (`otherTab` says where it happened). */
function happened(state: ManagerState, message: TabMessage, otherTab: boolean, error?: SessionEndedError): void {
  if (message.event === "signed-in") emit(state, "signed-in", { ...message.session, otherTab });
  else if (message.event === "signed-out") emit(state, "signed-out", { revoked: message.revoked, otherTab });
  else
    emit(state, "session-ended", { error: error ?? new SessionEndedError(message.status, message.fields), otherTab });
}

/** Fires a sign-in, sign-out or session end here, and tells the other tabs. */
export function announce(state: ManagerState, message: TabMessage, error?: SessionEndedError): void {
  try {
    state.channel?.postMessage(message);
  } catch {
    // A closed channel (the page is being unloaded): the other tabs learn it from storage.
  }
  happened(state, message, false, error);
}

/** Listens to the other tabs: what they announce is fired here too. */
export function listenToTabs(state: ManagerState): void {
  if (!state.channel) return;
  state.channel.onmessage = ({ data }: MessageEvent<TabMessage>) => {
    // The session this tab held in memory is over: forget it (and let no refresh begun before
    // commit), so the next getAccessToken reads what the other tab stored.
    state.generation++;
    state.current = state.unsaved = state.rejected = undefined;
    happened(state, data, true);
  };
}

/** Takes, if free, the marker lock saying that record `t` was rotated away (named by its id). */
const mark = <T>(state: ManagerState, t: TokenRecord, task: (lock?: unknown) => T) =>
  state.locks!.request(state.keys.prefix + "rotated:" + t.id, { ifAvailable: true }, task);

/**
 * Whether `t`'s refresh token may be presented: no tab has marked it rotated away. Always, without
 * Web Locks as the refresh lock.
 */
export async function notRotatedAway(state: ManagerState, t: TokenRecord): Promise<boolean> {
  return !state.locks || Boolean(await mark(state, t, (lock) => lock));
}

/**
 * Marks `t` rotated away. Called under the refresh lock (so before any other tab reads), and even if
 * the write of its successor fails: tabs whose `localStorage` still shows `t` learn from the lock
 * manager that it is gone. Held for a bounded time, on a timer that does not keep a Node process alive.
 */
export async function markRotatedAway(state: ManagerState, t: TokenRecord): Promise<void> {
  if (!state.locks) return;
  await new Promise<void>((granted) =>
    mark(state, t, () => {
      granted();
      return new Promise((r) => (setTimeout(r, MARKER_MS) as { unref?(): void }).unref?.());
    }).catch(granted),
  );
}
