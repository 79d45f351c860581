/**
 * One send of a request, and the log line it gets: every attempt the client makes (the first, each
 * retry, the one after a refresh) goes through {@link sendAttempt}, so each is logged once, with its
 * number and duration. And the retries of an exchange under the retry policy, which the policy
 * (`retryPolicy`, opt-in) runs and this module sends.
 */
import type { Fetch, SendState } from "../client-state.js";
import type { NetworkError } from "../errors.js";
import type { Log } from "../logger.js";
import { networkError } from "./network-error.js";
import { type Exchange, rebuild } from "./replay.js";

/** What an attempt came to: an answer, or the failure of a fetch that got none. */
export type Outcome = Response | NetworkError;

/** Logs what an attempt came to: its status, or its failure, with its duration and number. */
export function logOutcome(log: Log, request: Request, outcome: Outcome, attempt: number, started: number): void {
  const durationMs = Math.round(performance.now() - started);
  if (outcome instanceof Response) log("answered", request, { status: outcome.status, durationMs, attempt });
  else log("failed", request, { error: outcome.name, code: outcome.code, durationMs, attempt });
}

/** Sends `request` straight to `fetch` as attempt number `attempt`; a rejection comes back as a {@link NetworkError}. Logged. */
export async function sendAttempt(
  fetch: Fetch,
  request: Request,
  attempt: number,
  log: Log | undefined,
): Promise<Outcome> {
  const started = log ? performance.now() : 0;
  let outcome: Outcome;
  try {
    outcome = await fetch(request);
  } catch (cause) {
    outcome = networkError(request, cause);
  }
  if (log) logOutcome(log, request, outcome, attempt, started);
  return outcome;
}

/**
 * Retries `first` (the answer or failure of the exchange's first attempt) under the state's retry
 * policy, each attempt sent straight to the exchange's fetch with its kept body; resolves the last
 * outcome and the number of its attempt.
 */
export function retryAttempts(state: SendState, exchange: Exchange, first: Outcome): Promise<[Outcome, number]> {
  const { log } = state;
  const send = (attempt: number) => sendAttempt(exchange.fetch, rebuild(exchange), attempt, log);
  return state.retry!.run(exchange.request, first, send, log, state.onRetry);
}
