// A server process of the user's kind, for the multi-process tests of postgresStorage: it imports the
// BUILT package (by its own name) and node-postgres, opens a pool of its own, and keeps its tokens
// with `postgresStorage(pool, { baseUrl, clientId, table })`. It reads one JSON command per line on
// stdin and answers one JSON line on stdout, so that a test can start many, wait until each says it
// is ready, and release them all at once.
//
//   argv: <tenant url> <postgres url> <table> <client id> <redirect uri> [postgresStorage options as JSON]
//   {"cmd":"sign-in","offsetMs":n}          signs in through the sandbox's auto-approve
//   {"cmd":"call","offsetMs":n}             a new manager (as a new request of a server would find it
//                                           after a restart), its clock moved by n ms like the
//                                           sandbox's: getAccessToken, then GET /api/v1/auth/user
//   {"cmd":"call",…,"hold":true}            the refresh request is held forever once it is about to be
//                                           sent (the test kills the process then)
//   {"cmd":"call",…,"pause":p}              the process stops itself (SIGSTOP) once, at pause point p,
//                                           after printing {"paused":p}; the test sends SIGCONT. p:
//                                           "intent" (lock taken, record read, before the intent is
//                                           written), "in-flight" (the tenant answered, the answer
//                                           unread)
//   "manager" in a call: createTokenManager options (intentWaitMs, requestTimeoutMs)
//   "announceWait":true in a call: prints {"waiting":true} the first time the lock, found held, asks
//                                           the manager whether to wait on
import { createInterface } from "node:readline";
import pg from "pg";
import { createTokenManager } from "@tenant-integration/token-manager";
import { postgresStorage } from "@tenant-integration/token-store-postgres";

const [url, postgresUrl, table, clientId, redirectUri, storageOptions] = process.argv.slice(2);
const options = storageOptions ? JSON.parse(storageOptions) : {};
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const pool = new pg.Pool({ connectionString: postgresUrl, max: 3 });
// An idle connection the server ended (a restart) is an `error` event of the pool.
pool.on("error", () => {});

const stop = (where) => {
  say({ paused: where });
  process.kill(process.pid, "SIGSTOP"); // frozen here, timers and all, until SIGCONT
};

function manager({ offsetMs = 0, hold = false, pause, manager: more = {}, announceWait = false } = {}) {
  const storage = postgresStorage(pool, { ...options, baseUrl: url, clientId, table });
  let armed = pause;
  let announced = !announceWait;
  return createTokenManager({
    ...more,
    baseUrl: url,
    clientId,
    redirectUri,
    scopes: ["profile:read"],
    storage: {
      ...storage,
      lock: (name, task, wait) =>
        storage.lock(
          name,
          task,
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
        if (armed === "intent" && key.endsWith(":intent")) {
          armed = undefined;
          stop("intent");
        }
        return storage.set(key, value);
      },
    },
    now: () => Date.now() + offsetMs,
    fetch: async (input, init) => {
      const refreshing = String(init?.body).includes('"refresh_token"');
      if (hold && refreshing) {
        say({ holding: true });
        await new Promise(() => {});
      }
      if (refreshing && armed === "in-flight") {
        armed = undefined;
        const response = await fetch(input, init);
        stop("in-flight");
        return response;
      }
      return fetch(input, init);
    },
  });
}

async function run(command) {
  switch (command.cmd) {
    case "sign-in": {
      const tm = manager(command);
      const { url: authorize } = await tm.beginAuthorization();
      const location = (await fetch(authorize, { redirect: "manual" })).headers.get("location");
      await tm.completeAuthorization(location);
      return { signedIn: true };
    }
    case "call": {
      const token = await manager(command).getAccessToken();
      const response = await fetch(`${url}/api/v1/auth/user`, {
        headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
      });
      return { status: response.status, user: response.ok ? (await response.json()).name : undefined };
    }
    default:
      throw new Error(`unknown command ${command.cmd}`);
  }
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  run(JSON.parse(line)).then(say, (e) =>
    say({ error: e?.code ?? "ERROR", name: e?.name, message: String(e?.message), cause: e?.cause?.code }),
  );
});
say({ ready: true, pid: process.pid });
