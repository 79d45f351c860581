// One command-line process of the file-storage bench (crash-window.mjs): `fileStorage(file)` and
// nothing added. Prints {"ready":true}; on each stdin line {"offsetMs":n} it makes a new manager (as
// a new run of a tool would) whose clock is moved by n ms like the sandbox's, calls
// getAccessToken(), and prints {"ok":true} or {"error":code}.
import { createInterface } from "node:readline";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";

const [baseUrl, file, clientId, redirectUri] = process.argv.slice(2);
const print = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

createInterface({ input: process.stdin }).on("line", (line) => {
  const { offsetMs } = JSON.parse(line);
  const tm = createTokenManager({ baseUrl, clientId, redirectUri, scopes: ["profile:read"], storage: fileStorage(file), now: () => Date.now() + offsetMs });
  tm.getAccessToken().then(
    () => print({ ok: true }),
    (e) => print({ error: e?.code ?? String(e) }),
  );
});
print({ ready: true });
