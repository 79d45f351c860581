// The sessions feature of the Node actor (PROTOCOL.md, "Sessions"): the TypeScript kit's
// `createSessions` beside the actor's manager, on the same storage, serving the sessions a sign-in
// or call command names, each session's API client from the client package's `sessionClient`.
// Each session signs in as its own sandbox user (`sandbox_user`), and each call checks that the
// tenant answers a session's token with that session's user. The Go actor's `sessions.go`, command
// for command.
import { sessionClient } from "@tenant-integration/client";
import { createBinding, createSessions } from "@tenant-integration/token-manager";

/**
 * How many sessions one actor serves at once for a command: a server's users come together after an
 * expiry. Each has one request at a time in flight, so this also bounds the actor's connections to
 * the tenant, as a server's pool would (the Go actor's 32 connections): a few hundred connections
 * opened at one instant overflow the sandbox's accept queue, and the connections reset are no test
 * of the kit.
 */
const SESSIONS_AT_ONCE = 32;
/** How many sign-ins of a command are in flight at once. */
const SIGN_INS_AT_ONCE = 16;
/** The code every call of a sessions object gives an id that would break a key. */
const INVALID_SESSION_ID = "INVALID_SESSION_ID";

/** An error of the actor itself, with a protocol `code` (the actor's `ActorError`). */
class SessionsError extends Error {
  name = "ActorError";
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * The actor's sessions, on `storage` (the storage itself, with its lock per session and its pending
 * sign-ins written with a lifetime and taken once; or its `"lock": "none"` replacement).
 *
 * @param {object} options
 * @param {Record<string, any>} options.config the actor's configuration (PROTOCOL.md, "Start")
 * @param {import("@tenant-integration/token-manager").TokenStorage} options.storage
 * @param {(input: string | URL | Request, init?: RequestInit) => Promise<Response>} options.fetch
 *   the fetch that names the actor to the tenant and adds nothing else (a fault is armed on the
 *   actor's manager only)
 * @param {(input: string | URL | Request, init?: RequestInit) => boolean} options.isRefresh whether a
 *   request is a refresh-token grant
 * @param {() => number} options.now the actor's clock
 * @param {import("@tenant-integration/token-manager").SessionLogger} options.logger the kit's log, as protocol events
 */
export function openSessions({ config, storage, fetch, isRefresh, now, logger }) {
  const { requestTimeoutMs, intentWaitMs } = config.manager ?? {};
  const counted = { refreshes: 0 };
  /** The sessions' fetch: the actor's, counting the refreshes the tenant answered 200. */
  const sessionsFetch = async (input, init = {}) => {
    const response = await fetch(input, init);
    if (response.status === 200 && isRefresh(input, init)) counted.refreshes++;
    return response;
  };
  const sessions = createSessions({
    baseUrl: config.tenant,
    clientId: config.clientId,
    redirectUri: config.redirectUri,
    scopes: config.scopes,
    storage,
    fetch: sessionsFetch,
    now,
    logger,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    ...(intentWaitMs === undefined ? {} : { intentWaitMs }),
  });
  // One options object for every session's client, so that each is cached with its session.
  const api = { fetch: sessionsFetch };
  /** The ids of the sessions a command named: their managers are closed at the actor's exit. */
  const served = new Set();
  return { sessions, api, counted, fetch: sessionsFetch, served };
}

/**
 * Closes the manager of every session the actor served (its intent's beats and retried writes stop),
 * as a server does when it shuts down.
 *
 * @throws whatever a manager's close throws
 */
export function closeSessions(held) {
  for (const id of held.served) held.sessions.manager(id).close();
}

/**
 * The `sessions` of a command (`undefined` when it has none).
 *
 * @returns {{ id: string, user: string }[] | undefined}
 * @throws {SessionsError} `UNEXPECTED` for a malformed list
 */
export function sessionsOf(command) {
  if (!("sessions" in command)) return undefined;
  const list = command.sessions;
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s?.id !== "string" || !s.user))
    throw new SessionsError("UNEXPECTED", '"sessions" must be a non-empty list of {"id","user"}');
  return list.map((s) => ({ id: s.id, user: String(s.user) }));
}

/** Runs `task` for every session, at most `limit` at once; resolves with the failures, each naming its session. */
async function eachSession(list, limit, task) {
  const failures = [];
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const session = list[next++];
      try {
        await task(session);
      } catch (error) {
        failures.push({ id: session.id, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, list.length) }, worker));
  return failures;
}

/** The answer to a command some of whose sessions failed: the first failure's kit code, and how many failed. */
function firstFailure(failures, of) {
  const { id, error } = failures[0];
  const code = typeof error?.code === "string" ? error.code : "UNEXPECTED";
  return new SessionsError(
    code,
    `${failures.length} of ${of} sessions failed; the first: session ${id}: ${String(error?.message ?? error)}`,
  );
}

/**
 * Requests the authorize URL as the sandbox's `user` (`sandbox_user`: the sandbox approves at once)
 * without following the redirect, and returns the callback URL its `Location` names (never printed:
 * it holds the code and state).
 */
async function approve(held, authorize, user) {
  const response = await held.fetch(`${authorize}&sandbox_user=${encodeURIComponent(user)}`, { redirect: "manual" });
  await response.arrayBuffer();
  const location = response.headers.get("location");
  if ((response.status !== 302 && response.status !== 303) || !location)
    throw new SessionsError("UNEXPECTED", `the authorize request was answered ${response.status} without a redirect`);
  return new URL(location, authorize).href;
}

/** `sign-in` with sessions: each begun with a browser binding, approved as its user, completed with that binding. */
export async function signInSessions(held, list) {
  for (const { id } of list) held.served.add(id);
  const failures = await eachSession(list, SIGN_INS_AT_ONCE, async ({ id, user }) => {
    const { url, browser } = await held.sessions.beginSignIn({ session: id });
    await held.sessions.completeSignIn(await approve(held, url, user), { browser, session: id });
  });
  if (failures.length > 0) throw firstFailure(failures, list.length);
  return { signedIn: list.length };
}

/**
 * `call` with sessions: every session's client asks for the user at once, as a server serving all
 * its users does; `crossed` lists each session answered with another user than its own.
 */
export async function callSessions(held, list) {
  for (const { id } of list) held.served.add(id);
  const before = held.counted.refreshes;
  let status = 200;
  const crossed = [];
  const failures = await eachSession(list, SESSIONS_AT_ONCE, async ({ id, user }) => {
    const { data, response } = await sessionClient(held.sessions, id, held.api).GET("/api/v1/auth/user");
    if (response.status !== 200) {
      if (status === 200) status = response.status;
      return;
    }
    const got = String(/** @type {{ id?: unknown }} */ (data)?.id);
    if (got !== user) crossed.push({ id, user, got });
  });
  if (failures.length > 0) throw firstFailure(failures, list.length);
  return { status, refreshed: held.counted.refreshes > before, sessions: list.length, crossed };
}

/** Whether `work` (sync or async) fails with INVALID_SESSION_ID. */
async function refusedBy(work) {
  try {
    await work();
    return false;
  } catch (error) {
    return error?.code === INVALID_SESSION_ID;
  }
}

/**
 * `refuse-ids`: gives each id to every call of the sessions object that takes one (and to the
 * client package's `sessionClient`); each must refuse it with INVALID_SESSION_ID. `accepted` lists
 * the ids some call took.
 */
export async function refuseIds(held, { ids }) {
  if (!Array.isArray(ids) || ids.length === 0)
    throw new SessionsError("UNEXPECTED", '"ids" must be a non-empty list of strings');
  const { sessions, api } = held;
  let refused = 0;
  const accepted = [];
  for (const id of ids) {
    const calls = [
      () => sessions.manager(id),
      () => sessions.beginSignIn({ session: id }),
      // The id is checked before the callback is looked at.
      () => sessions.completeSignIn(sessions.redirectUri, { session: id }),
      () => sessionClient(sessions, id, api),
      () => sessions.isSignedIn(id),
      () => sessions.signOut(id),
      () => sessions.revoke(id),
    ];
    const answers = await Promise.all(calls.map(refusedBy));
    if (answers.every(Boolean)) refused++;
    else accepted.push(id);
  }
  return { refused, accepted };
}

/** The kit's code of a completion's outcome: `accepted` when it succeeded. */
async function outcomeOf(completion) {
  try {
    await completion;
    return "accepted";
  } catch (error) {
    return typeof error?.code === "string" ? error.code : "UNEXPECTED";
  }
}

/**
 * `replay-callback`: begins a sign-in for a session of its own, has the tenant approve it as `user`,
 * and completes the callback with another browser's binding (refused before any exchange), then with
 * the right one (the sign-in is used up): the login CSRF of RFC 9700 §4.7.1.
 */
export async function replayCallback(held, { user }, name) {
  const id = `replayed.${name}`;
  const { url, browser } = await held.sessions.beginSignIn({ session: id });
  const callback = await approve(held, url, String(user));
  const refused = await outcomeOf(held.sessions.completeSignIn(callback, { browser: createBinding(), session: id }));
  const after = await outcomeOf(held.sessions.completeSignIn(callback, { browser, session: id }));
  return { refused, after, signedIn: await held.sessions.isSignedIn(id) };
}
