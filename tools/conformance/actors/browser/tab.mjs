// The browser actor's tab script, bundled by host.mjs (esbuild, platform "browser") and run in one
// tab of the shared Chromium. It drives the token manager through its public API only and answers
// with protocol objects; actor.mjs relays them to and from the orchestrator.
//
// Events and log lines reach the actor process as console messages marked with EVENT_MARK, not
// through playwright's exposeBinding: every actor's playwright is attached to every tab of the
// shared browser, and all of them answer a binding call, the ones that did not expose it with
// "Function … is not exposed". A console message is only observed.
//
// Sign-in takes two steps, because a tab cannot read a cross-origin redirect's Location (its
// `fetch(url, { redirect: "manual" })` gives an opaque redirect): `run({cmd: "sign-in"})` begins the
// authorization and answers `{authorize: url}`; the actor process requests the URL itself and sends
// `run({cmd: "sign-in", callbackUrl})`, which completes it. The pending sign-in stays in this tab.
import { createTenantClient } from "@tenant-integration/client";
import { createTokenManager, logSessionTo, refreshIntents, webStorage } from "@tenant-integration/token-manager";
import { EVENT_MARK } from "./event-mark.mjs";

/** The protocol's log levels, by the kit's level names. */
const LEVELS = { debug: "debug", info: "info", warn: "warning", error: "error" };

/** The manager's events, by the protocol's `what`. */
const SESSION_EVENTS = {
  "tokens-refreshed": "refreshed",
  "session-ended": "ended",
  "signed-out": "signed-out",
  "storage-failed": "storage-failed",
};

/** A lock that does not lock: only to prove that the suite can fail (`"lock":"none"`). */
const noLock = (_name, task) => task();

const emit = (event) => console.debug(EVENT_MARK + JSON.stringify(event));

/** The kit's `Logger` shape: every line, at its level, as a protocol log event. */
const protocolLogger = Object.fromEntries(
  Object.entries(LEVELS).map(([kitLevel, level]) => [
    kitLevel,
    (_fields, message) => emit({ event: "log", level, message }),
  ]),
);

/**
 * A `fetch` that names the actor on every request to the tenant (the ledger's `Sandbox-Actor`) and
 * adds nothing else: the kit's headers are the kit's, checked from the tenant's side.
 */
const fetchAs =
  (name) =>
  (input, init = {}) => {
    // A Request (the client's) keeps its own headers: init's would replace them all.
    const headers = new Headers(input instanceof Request ? input.headers : undefined);
    new Headers(init.headers).forEach((value, key) => headers.set(key, value));
    headers.set("Sandbox-Actor", name);
    return fetch(input, { ...init, headers });
  };

/** The storage and lock options of a protocol `storage`: tabs support `{"kind":"web"}` only. */
function storageOptions(storage) {
  if (storage?.kind !== "web")
    throw Object.assign(
      new Error(
        `a browser tab keeps its tokens in localStorage: storage kind ${String(storage?.kind)} is not supported`,
      ),
      { code: "UNSUPPORTED" },
    );
  const options = { storage: webStorage(localStorage) };
  // The documented bring-your-own-lock seam: the `lock` option replaces the Web Locks.
  // A lock of one's own is given with the refresh intents (the manager refuses it without them).
  if (storage.lock === "none") Object.assign(options, { lock: noLock, refreshIntents });
  return options;
}

/** The protocol's error object for anything thrown. */
function failure(error) {
  const code = typeof error?.code === "string" ? error.code : "UNEXPECTED";
  return {
    code,
    name: typeof error?.name === "string" ? error.name : "Error",
    message: String(error?.message ?? error),
  };
}

/** Everything one tab's actor holds. */
const state = { manager: undefined, client: undefined, tenant: "", fetch: undefined, offsetMs: 0, refreshes: 0 };

/**
 * Makes the manager. `config` is the actor's `CONFORMANCE_ACTOR` without `browser`.
 *
 * @param {{ name: string, tenant: string, clientId: string, redirectUri: string, scopes: string[],
 *   storage: { kind: string, lock?: string }, clockOffsetMs?: number,
 *   manager?: { requestTimeoutMs?: number, intentWaitMs?: number, lockWaitMs?: number } }} config
 * @returns {Promise<{ ok: true } | { ok: false, error: object }>}
 */
async function start(config) {
  try {
    state.tenant = new URL(config.tenant).origin;
    state.offsetMs = config.clockOffsetMs ?? 0;
    state.fetch = fetchAs(config.name);
    const { requestTimeoutMs, intentWaitMs, lockWaitMs } = config.manager ?? {};
    const manager = createTokenManager({
      baseUrl: config.tenant,
      clientId: config.clientId,
      redirectUri: config.redirectUri,
      scopes: config.scopes,
      ...storageOptions(config.storage),
      fetch: state.fetch,
      now: () => Date.now() + state.offsetMs,
      logger: logSessionTo(protocolLogger, "debug"),
      // Only the options given: the manager's defaults stand for the others.
      ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
      ...(intentWaitMs === undefined ? {} : { intentWaitMs }),
      // In a tab the lock wait is the Web Lock's, bounded by lockTimeoutMs before it is stolen.
      ...(lockWaitMs === undefined ? {} : { lockTimeoutMs: lockWaitMs }),
    });
    manager.on("tokens-refreshed", () => state.refreshes++);
    state.client = createTenantClient({ baseUrl: config.tenant, auth: manager, fetch: state.fetch });
    for (const [event, what] of Object.entries(SESSION_EVENTS)) {
      manager.on(event, (payload) => {
        const code = payload?.error?.code;
        emit({ event: "session", what, ...(typeof code === "string" ? { code } : {}) });
      });
    }
    state.manager = manager;
    return { ok: true };
  } catch (error) {
    return { ok: false, error: failure(error) };
  }
}

/** `GET /api/v1/auth/user` through the kit's client (its middleware refreshes and retries once after a 401). */
async function call() {
  const before = state.refreshes;
  const { response } = await state.client.GET("/api/v1/auth/user");
  return { status: response.status, refreshed: state.refreshes > before };
}

/** Without `callbackUrl`: begins the authorization (`{authorize: url}`); with it: completes it (`{}`). */
async function signIn({ callbackUrl }) {
  if (callbackUrl === undefined) return { authorize: (await state.manager.beginAuthorization()).url };
  await state.manager.completeAuthorization(callbackUrl);
  return {};
}

/** Each command's work, resolving with its `result`. `exit` is the actor process's. */
const COMMANDS = {
  "sign-in": signIn,
  call,
  clock: async ({ offsetMs }) => {
    if (typeof offsetMs !== "number" || !Number.isFinite(offsetMs))
      throw Object.assign(new Error("clock: offsetMs must be a number"), { code: "UNEXPECTED" });
    state.offsetMs = offsetMs;
    return {};
  },
  arm: async () => {
    throw Object.assign(new Error("a browser tab cannot stop its own process"), { code: "UNSUPPORTED" });
  },
  status: async () => ({ signedIn: await state.manager.isSignedIn() }),
  revoke: async () => (await state.manager.revoke(), {}),
  "sign-out": async () => (await state.manager.signOut(), {}),
  // The tab's part of `exit`: the manager's background work stops (its intent's beats, a retried write).
  close: async () => {
    state.manager.close();
    return {};
  },
};

/**
 * Runs one protocol command and resolves with its answer, never rejecting.
 *
 * @param {{ id: number, cmd: string }} command
 * @returns {Promise<{ id: number, ok: true, result: object } | { id: number, ok: false, error: object }>}
 */
async function run(command) {
  try {
    const work = COMMANDS[command.cmd];
    if (!work) throw Object.assign(new Error(`unknown command ${String(command.cmd)}`), { code: "UNEXPECTED" });
    if (!state.manager) throw Object.assign(new Error("the manager is not started"), { code: "UNEXPECTED" });
    return { id: command.id, ok: true, result: await work(command) };
  } catch (error) {
    return { id: command.id, ok: false, error: failure(error) };
  }
}

globalThis.conformanceActor = { start, run };
