/**
 * Test-only routes, present only when the sandbox runs with the test clock: move time forward,
 * read and clear the event log and the refresh-token ledger, inject faults.
 *
 * @module
 */
import type { Hono } from "hono";
import { readBody } from "../body.js";
import { MAX_ADVANCE_SECONDS } from "../clock.js";
import { BadRequestError } from "../errors.js";
import { FaultConfigError, type Faults, type FaultSpec } from "../faults.js";
import type { LedgerView } from "../ledger.js";
import type { RequestLog } from "../requests.js";
import type { SandboxState } from "../tenant-state.js";

/** Path of the clock route. */
export const CLOCK_PATH = "/__sandbox/clock";
/** Path of the event log route. */
export const EVENTS_PATH = "/__sandbox/events";
/** Path of the refresh-token ledger route. */
export const LEDGER_PATH = "/__sandbox/ledger";
/** Path of the request log route. */
export const REQUESTS_PATH = "/__sandbox/requests";
/** Path of the fault injection route. */
export const FAULTS_PATH = "/__sandbox/faults";
/** Path of the users route. */
export const USERS_PATH = "/__sandbox/users";

function clockBody(state: SandboxState): Record<string, unknown> {
  const now = state.clock.now();
  return { now: new Date(now).toISOString(), epochMs: now, offsetSeconds: state.clock.offsetSeconds };
}

function badRequest(description: string): Response {
  return Response.json({ error: "invalid_request", error_description: description }, { status: 400 });
}

/**
 * Adds the test routes to `app`:
 *
 * - `GET /__sandbox/clock`: `{ now, epochMs, offsetSeconds }`.
 * - `POST /__sandbox/clock` with JSON `{ "advanceSeconds": n }` (0 ≤ n ≤ ten years): moves time
 *   forward and returns the new time like GET.
 * - `GET /__sandbox/events`: `{ events: [...] }`, oldest first; never token values.
 * - `DELETE /__sandbox/events`: clears the log, `{ cleared: n }`.
 * - `GET /__sandbox/ledger`: the refresh-token ledger, `{ refreshTokens, reuses, families }` (a
 *   {@link LedgerView}); fingerprints, never token values.
 * - `DELETE /__sandbox/ledger`: clears the ledger (not the event log), `{ cleared: n }`.
 * - `GET /__sandbox/requests`: `{ requests: [...] }`, the headers of every request to the token,
 *   revocation and API endpoints (a {@link SandboxRequest} each), oldest first; an `Authorization`
 *   value is recorded as its scheme alone, never a token.
 * - `DELETE /__sandbox/requests`: clears that log, `{ cleared: n }`.
 * - `POST /__sandbox/faults` with a JSON {@link FaultSpec} `{ route, method?, kind, status?,
 *   retryAfter?, delayMs?, count? }`: the next `count` requests to the route fail so; answers 201
 *   with the fault (its `id` and `remaining` count), 400 for an invalid spec.
 * - `GET /__sandbox/faults`: `{ faults: [...] }`, those still waiting for requests.
 * - `DELETE /__sandbox/faults`: removes them all, `{ cleared: n }`.
 * - `GET /__sandbox/users`: `{ users: [...] }`, the records of the users who can sign in, the
 *   default first; a test picks one with `sandbox_user=<id>` on the authorization request.
 *
 * @see RFC 6749 §5.1 (expires_in, which the clock lets tests exceed)
 * @see RFC 9110 §10.2.3 (Retry-After, which a 429 or 503 fault may carry)
 * @see RFC 9700 §4.14.2 (refresh token rotation and reuse, which the ledger shows)
 * @see RFC 9110 §12.5.1 (Accept) and §8.3 (Content-Type), which the request log shows
 */
export function registerAdminRoutes(app: Hono, state: SandboxState, faults: Faults, requests: RequestLog): void {
  app.get(CLOCK_PATH, () => Response.json(clockBody(state)));
  app.post(CLOCK_PATH, async (c) => {
    let body: Record<string, unknown>;
    try {
      body = await readBody(c.req.raw, ["json"]);
    } catch (error) {
      if (error instanceof BadRequestError) return badRequest(error.message);
      throw error;
    }
    const seconds = body["advanceSeconds"];
    if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_ADVANCE_SECONDS) {
      return badRequest(`advanceSeconds must be a number from 0 to ${MAX_ADVANCE_SECONDS}.`);
    }
    state.clock.advance(seconds);
    return Response.json(clockBody(state));
  });
  app.get(EVENTS_PATH, () => Response.json({ events: state.events.list() }));
  app.delete(EVENTS_PATH, () => Response.json({ cleared: state.events.clear() }));
  app.get(LEDGER_PATH, () => Response.json(state.ledger.list()));
  app.delete(LEDGER_PATH, () => Response.json({ cleared: state.ledger.clear() }));
  app.get(REQUESTS_PATH, () => Response.json({ requests: requests.list() }));
  app.delete(REQUESTS_PATH, () => Response.json({ cleared: requests.clear() }));
  app.post(FAULTS_PATH, async (c) => {
    try {
      const fault = faults.add((await readBody(c.req.raw, ["json"])) as unknown as FaultSpec);
      return Response.json(fault, { status: 201 });
    } catch (error) {
      if (error instanceof BadRequestError || error instanceof FaultConfigError) return badRequest(error.message);
      throw error;
    }
  });
  app.get(FAULTS_PATH, () => Response.json({ faults: faults.list() }));
  app.delete(FAULTS_PATH, () => Response.json({ cleared: faults.clear() }));
  app.get(USERS_PATH, () => Response.json({ users: state.users.list() }));
}
