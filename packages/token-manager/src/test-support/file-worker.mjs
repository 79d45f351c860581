// A command-line process of the user's kind, for the multi-process tests of fileStorage: it imports
// the BUILT package (by its own name) and keeps its tokens with `fileStorage(file)` and nothing added.
// It reads one JSON command per line on stdin and answers one JSON line on stdout, so that a test can
// start many of them, wait until each says it is ready, and release them all at once.
//
//   argv: <tenant url> <token file> <client id> <redirect uri> [fileStorage options as JSON]
//   {"cmd":"sign-in"}                       signs in through the sandbox's auto-approve
//   {"cmd":"call","offsetMs":n}             a new manager (as a new run of the tool would make), with its
//                                           clock moved by n ms like the sandbox's: getAccessToken, then
//                                           GET /api/v1/auth/user
//   {"cmd":"call","offsetMs":n,"hold":true} the same, but the refresh request is held forever once
//                                           it is about to be sent (the test kills the process then)
//   {"cmd":"call","offsetMs":n,"pause":p}   the same, but the process stops itself (SIGSTOP) once, at
//                                           pause point p, after printing {"paused":p}; the test sends
//                                           SIGCONT. p: "intent" (lock taken, record read, before the
//                                           checks and the intent), "in-flight" (request answered by
//                                           the tenant, the answer unread, the request timer running),
//                                           "answered" (answer read, before it is written); or "sent":
//                                           no stop, it prints {"sending":true} as the request leaves
//                                           (the test stops the process from outside while it waits)
//   "manager" in a call: createTokenManager options (requestTimeoutMs, intentWaitMs)
//   "count":true in a call: the answer adds "lockTaken", how many times the call ran a task under the
//                                           storage's refresh lock (0: it used tokens without the lock)
//   "announceWait":true in a call: prints {"waiting":true} the first time the lock, found held, asks
//                                           the manager whether to wait on (the call is waiting for it)
//   {"cmd":"write","key":k,"value":v}       storage.set(k, v)
//   {"cmd":"write-loop","size":n}           storage.set of n-character values, forever (to be killed)
//   {"cmd":"hold-lock","log":path,"ms":n}   takes the storage's lock, appends "in <pid>" to the log,
//                                           holds it n ms, appends "out <pid>", releases
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";

const [url, file, clientId, redirectUri, storageOptions] = process.argv.slice(2);
const options = storageOptions ? JSON.parse(storageOptions) : {};
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

const stop = (where) => {
  say({ paused: where });
  process.kill(process.pid, "SIGSTOP"); // frozen here, timers and all, until SIGCONT
};

function manager(
  offsetMs = 0,
  hold = false,
  pause = undefined,
  more = {},
  seen = { lockTaken: 0 },
  announceWait = false,
) {
  const storage = fileStorage(file, options);
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
        if ((armed === "intent" && key.endsWith(":intent")) || (armed === "write" && key.endsWith(":tokens"))) {
          stop(armed === "write" ? "answered" : armed);
          armed = undefined;
        }
        return storage.set(key, value);
      },
    },
    now: () => Date.now() + offsetMs,
    fetch: async (input, init) => {
      const refreshing = String(init.body).includes('"refresh_token"');
      if (hold && refreshing) {
        say({ holding: true });
        await new Promise(() => {});
      }
      if (refreshing && armed === "sent") {
        armed = undefined;
        say({ sending: true });
        return fetch(input, init);
      }
      if (refreshing && armed === "in-flight") {
        armed = undefined;
        const response = await fetch(input, init);
        stop("in-flight");
        return response;
      }
      if (refreshing && armed === "answered") {
        armed = "write";
        const response = await fetch(input, init);
        return new Response(await response.text(), { status: response.status, headers: response.headers });
      }
      return fetch(input, init);
    },
  });
}

async function run(command) {
  switch (command.cmd) {
    case "sign-in": {
      const tm = manager(command.offsetMs);
      const { url: authorize } = await tm.beginAuthorization();
      const location = (await fetch(authorize, { redirect: "manual" })).headers.get("location");
      await tm.completeAuthorization(location);
      return { signedIn: true };
    }
    case "call": {
      const seen = { lockTaken: 0 };
      const token = await manager(
        command.offsetMs,
        command.hold,
        command.pause,
        command.manager,
        seen,
        command.announceWait,
      ).getAccessToken();
      const response = await fetch(`${url}/api/v1/auth/user`, {
        headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
      });
      return {
        status: response.status,
        user: response.ok ? (await response.json()).name : undefined,
        ...(command.count ? { lockTaken: seen.lockTaken } : {}),
      };
    }
    case "write":
      await fileStorage(file, options).set(command.key, command.value);
      return { written: command.key };
    case "write-loop": {
      const storage = fileStorage(file, options);
      say({ looping: true });
      for (let i = 0; ; i++) await storage.set(`loop`, String(i).padEnd(command.size, "x"));
    }
    case "hold-lock":
      await fileStorage(file, options).lock("hold", async () => {
        appendFileSync(command.log, `in ${process.pid}\n`);
        await new Promise((r) => setTimeout(r, command.ms));
        appendFileSync(command.log, `out ${process.pid}\n`);
      });
      return { held: true };
    default:
      throw new Error(`unknown command ${command.cmd}`);
  }
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  run(JSON.parse(line)).then(say, (e) =>
    say({ error: e?.code ?? "ERROR", name: e?.name, message: String(e?.message), cause: e?.cause?.message }),
  );
});
say({ ready: true, pid: process.pid });
