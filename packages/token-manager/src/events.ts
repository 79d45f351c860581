/**
 * The manager's events: what it tells its listeners (signed in, refreshed, signed out, session
 * ended, storage failed), kept in the state's `listeners`. As Python's `_events.py` and Go's
 * `events.go`.
 */
import type { ManagerState } from "./manager-state.js";
import type { Listener, TokenManagerEvents } from "./types.js";

/** Subscribes to an event; returns the unsubscribe function. */
export function on<E extends keyof TokenManagerEvents>(
  state: ManagerState,
  event: E,
  listener: Listener<E>,
): () => void {
  const listeners = (state.listeners[event] ??= new Set());
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Unsubscribes a listener. */
export function off<E extends keyof TokenManagerEvents>(state: ManagerState, event: E, listener: Listener<E>): void {
  state.listeners[event]?.delete(listener);
}

/** Fires `event` to its listeners; a listener's failure is its own. */
export function emit<E extends keyof TokenManagerEvents>(
  state: ManagerState,
  event: E,
  payload?: TokenManagerEvents[E],
): void {
  for (const listener of [...(state.listeners[event] ?? [])] as Listener<E>[]) {
    try {
      listener(payload as TokenManagerEvents[E]);
    } catch {
      // A listener's failure is its own: the manager's state is already settled.
    }
  }
}
