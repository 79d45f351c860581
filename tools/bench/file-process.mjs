// One command-line process of the file-storage bench (crash-window.mjs): `fileStorage(file)` and
// nothing added. Prints {"ready":true}; on each stdin line {"offsetMs":n} it makes a new manager (as
// a new run of a tool would) whose clock is moved by n ms like the sandbox's, calls
// getAccessToken(), and prints {"ok":true} or {"error":code}. Its fetch is warmed up first (below).
import { createInterface } from "node:readline";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";

const [baseUrl, file, clientId, redirectUri] = process.argv.slice(2);
const print = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

createInterface({ input: process.stdin }).on("line", (line) => {
  const { offsetMs } = JSON.parse(line);
  const tm = createTokenManager({
    baseUrl,
    clientId,
    redirectUri,
    scopes: ["profile:read"],
    storage: fileStorage(file),
    now: () => Date.now() + offsetMs,
  });
  tm.getAccessToken().then(
    () => print({ ok: true }),
    (e) => print({ error: e?.code ?? String(e) }),
  );
});
// Fetch is warmed up before the process says it is ready: Node loads its fetch implementation on the
// first call (about 30-40 ms on a busy machine). Without this, the 20-process fleet's refresher is
// usually a process that has never fetched, while the lone process is warm after its first round, and
// the ratio measured that load rather than the coordination. Any answer will do (401: no token).
await fetch(new URL("/api/v1/auth/user", baseUrl)).then((response) => response.arrayBuffer());
print({ ready: true });
