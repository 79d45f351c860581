// A server in its own process, so the load generator does not share its event loop:
// `node server-process.mjs sandbox` starts the sandbox with a signed-in token;
// `node server-process.mjs bare` starts a bare node:http server answering the same user JSON;
// `node server-process.mjs json` answers every request (body read first) with a small JSON.
// Prints one JSON line { url, token } and serves until killed. Each line "cpu" on its stdin is
// answered with one JSON line { cpuMicros }: the process's CPU time so far (user + system, all its
// threads, from process.cpuUsage() in µs: the kernel's per-process figures in /proc move in 10 ms
// ticks, too coarse for a few seconds of light load).
import { createServer } from "node:http";
import { createInterface } from "node:readline";

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() !== "cpu") return;
  const { user, system } = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ cpuMicros: user + system })}\n`);
});
// stdin closed (the bench ended without stopping it): nothing left to serve
process.stdin.on("end", () => process.exit(0));
import { startSandbox } from "@tenant-integration/sandbox";

const mode = process.argv[2];
if (mode === "sandbox") {
  // As the tenant-sandbox CLI runs it: alone in its process, with the adapter's fast globals.
  const running = await startSandbox({
    port: 0,
    fastGlobals: true,
    clients: [{ id: "bench", redirectUris: ["http://127.0.0.1:53682/callback"] }],
  });
  const { accessToken } = running.sandbox.issueTokens("bench", ["profile:read"]);
  console.log(JSON.stringify({ url: running.url, token: accessToken }));
} else if (mode === "bare") {
  const body = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org", locale: "en" });
  const server = createServer((req, res) => {
    if (req.url === "/api/v1/auth/user" && req.headers.authorization === "Bearer bare-token") {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end(body);
    } else res.writeHead(401).end();
  });
  server.listen(0, "127.0.0.1", () =>
    console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}`, token: "bare-token" })),
  );
} else if (mode === "json") {
  const body = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org" });
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(body));
  });
  server.listen(0, "127.0.0.1", () =>
    console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}`, token: "" })),
  );
} else {
  console.error("usage: server-process.mjs sandbox|bare|json");
  process.exit(2);
}
