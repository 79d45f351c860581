// The worker side of the multi-process token manager tests: a process of the user's kind that
// imports the BUILT token manager and a storage by their own names (the caller passes them in), reads
// one JSON command per line on stdin and answers one JSON line on stdout. The file storage's workers
// and the PostgreSQL store's share it; each adds the commands of its own storage.
//
//   {"cmd":"sign-in","offsetMs":n}          signs in through the sandbox's auto-approve
//   {"cmd":"call","offsetMs":n}             a new manager (as a new run of the tool, or a server after a
//                                           restart, would make), its clock moved by n ms like the
//                                           sandbox's: getAccessToken, then GET /api/v1/auth/user
//   {"cmd":"call",…,"hold":true}            the refresh request is held forever once it is about to be
//                                           sent (the test kills the process then)
//   {"cmd":"call",…,"pause":p}              the process stops itself (SIGSTOP) once, at pause point p,
//                                           after printing {"paused":p}; the test sends SIGCONT. p:
//                                           "intent" (lock taken, record read, before the checks and
//                                           the intent), "in-flight" (the tenant answered, the answer
//                                           unread, the request timer running), "answered" (answer
//                                           read, before it is written); or "sent": no stop, it prints
//                                           {"sending":true} as the request leaves (the test stops the
//                                           process from outside while it waits)
//   "manager" in a call: createTokenManager options (requestTimeoutMs, intentWaitMs)
//   "count":true in a call: the answer adds "lockTaken", how many times the call ran a task under the
//                                           storage's refresh lock (0: it used tokens without the lock)
//   "announceWait":true in a call: prints {"waiting":true} the first time the lock, found held, asks
//                                           the manager whether to wait on (the call is waiting for it)
// A failed command answers {"error":code,"name","message","cause":its cause's message,"causeCode"}.
import { createInterface } from "node:readline";

/** Prints one JSON line. */
export const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** Stops this process (SIGSTOP) at `where`, after saying so: frozen, timers and all, until SIGCONT. */
function stop(where) {
  say({ paused: where });
  process.kill(process.pid, "SIGSTOP");
}

/** `storage` with the lock counted (`seen.lockTaken`) and its wait announced once, and a pause at the intent's or the tokens' write. */
function watchedStorage(storage, armed, seen, announceWait) {
  let announced = !announceWait;
  return {
    ...storage,
    lock: (name, task, wait) =>
      storage.lock(
        name,
        (held) => {
          seen.lockTaken++;
          return task(held);
        },
        wait?.until && !announced
          ? {
              until: () => {
                if (!announced) say({ waiting: true });
                announced = true;
                return wait.until();
              },
            }
          : wait,
      ),
    async set(key, value) {
      if ((armed.at === "intent" && key.endsWith(":intent")) || (armed.at === "write" && key.endsWith(":tokens"))) {
        stop(armed.at === "write" ? "answered" : armed.at);
        armed.at = undefined;
      }
      return storage.set(key, value);
    },
  };
}

/** The global fetch, holding or pausing the refresh request as `hold` and `armed` say. */
function watchedFetch(hold, armed) {
  return async (input, init) => {
    const refreshing = String(init?.body).includes('"refresh_token"');
    if (hold && refreshing) {
      say({ holding: true });
      await new Promise(() => {});
    }
    if (refreshing && armed.at === "sent") {
      armed.at = undefined;
      say({ sending: true });
      return fetch(input, init);
    }
    if (refreshing && armed.at === "in-flight") {
      armed.at = undefined;
      const response = await fetch(input, init);
      stop("in-flight");
      return response;
    }
    if (refreshing && armed.at === "answered") {
      armed.at = "write";
      const response = await fetch(input, init);
      return new Response(await response.text(), { status: response.status, headers: response.headers });
    }
    return fetch(input, init);
  };
}

/**
 * Serves the commands above on stdin, with managers of `createTokenManager` for the tenant at `url`
 * keeping their tokens in `storage()` (a new storage per manager), and `commands`, the storage's own
 * (`(command, storage) => answer`); says `{"ready":true,"pid"}` once listening.
 */
export function runWorker({ createTokenManager, url, clientId, redirectUri, storage, commands = {} }) {
  const manager = ({ offsetMs = 0, hold = false, pause, manager: more = {}, announceWait = false } = {}, seen) => {
    const armed = { at: pause };
    return createTokenManager({
      ...more,
      baseUrl: url,
      clientId,
      redirectUri,
      scopes: ["profile:read"],
      storage: watchedStorage(storage(), armed, seen ?? { lockTaken: 0 }, announceWait),
      now: () => Date.now() + offsetMs,
      fetch: watchedFetch(hold, armed),
    });
  };
  const run = async (command) => {
    if (command.cmd === "sign-in") {
      const tm = manager(command);
      const { url: authorize } = await tm.beginAuthorization();
      const location = (await fetch(authorize, { redirect: "manual" })).headers.get("location");
      await tm.completeAuthorization(location);
      return { signedIn: true };
    }
    if (command.cmd === "call") {
      const seen = { lockTaken: 0 };
      const token = await manager(command, seen).getAccessToken();
      const response = await fetch(`${url}/api/v1/auth/user`, {
        headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
      });
      return {
        status: response.status,
        user: response.ok ? (await response.json()).name : undefined,
        ...(command.count ? { lockTaken: seen.lockTaken } : {}),
      };
    }
    const own = commands[command.cmd];
    if (own) return own(command, storage());
    throw new Error(`unknown command ${command.cmd}`);
  };
  createInterface({ input: process.stdin }).on("line", (line) => {
    run(JSON.parse(line)).then(say, (e) =>
      say({
        error: e?.code ?? "ERROR",
        name: e?.name,
        message: String(e?.message),
        cause: e?.cause?.message,
        causeCode: e?.cause?.code,
      }),
    );
  });
  say({ ready: true, pid: process.pid });
}
