#!/usr/bin/env node
// `pnpm start`: after `turbo run build`, serves what a newcomer wants to see and prints the URLs:
// the docs (apps/docs/dist, on a tiny static server in this process), the sandbox tenant (its
// built bin), the example web app signed in against that sandbox, and the example servers (Go,
// TypeScript, Python, Java) whose users each connect their own tenant account. Ctrl-C (or SIGTERM) stops every service it started, children
// included.
//
// To add a service, add an entry to `services`: a child process (command, args, a `ready` pattern
// on its output, an `env` and a `cwd` of its own) or an in-process server (`start()`), with the port it prefers.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const HOST = "127.0.0.1";
const sandboxCli = join(root, "packages", "sandbox", "dist", "cli.js");
const docsDir = join(root, "apps", "docs", "dist");
const exampleDir = join(root, "apps", "example-web", "dist");
// The example app's port is chosen first, so the sandbox registers exactly its callback URLs.
const webPort = await freePort(Number(process.env.WEB_PORT ?? 5173));
const sandboxClient = `id=demo,redirect=http://localhost:${webPort}/callback|http://127.0.0.1:${webPort}/callback`;
// The command-line client of the docs' quick start ("In Node", "In Python"), on its fixed loopback port.
const cliClient = "id=demo-cli,redirect=http://127.0.0.1:53682/callback";
// The example server app of many users (apps/example-go-server), its port chosen first as the web app's.
const goServer = join(root, "apps", "example-go-server", "bin", "example-go-server");
const goServerPort = await freePort(Number(process.env.GO_SERVER_PORT ?? 8090));
// The TypeScript and Python example servers (apps/example-ts-server, apps/example-python-server),
// the same app in each kit, their ports chosen first too: one client takes every server's callback.
const tsServer = join(root, "apps", "example-ts-server", "dist", "main.js");
const tsServerPort = await freePort(Number(process.env.TS_SERVER_PORT ?? 8091));
const pythonServer = join(root, "apps", "example-python-server", "app.py");
const python = join(root, ".venv", "bin", "python");
const pythonServerPort = await freePort(Number(process.env.PYTHON_SERVER_PORT ?? 8092));
// The Java example server (apps/example-java-server): the java command its build wrote, run in its directory.
const javaServerDir = join(root, "apps", "example-java-server");
const javaServerCommand = join(javaServerDir, "target", "command.json");
const javaServerPort = await freePort(Number(process.env.JAVA_SERVER_PORT ?? 8093));
const serverCallbacks = [goServerPort, tsServerPort, pythonServerPort, javaServerPort].map(
  (port) => `http://127.0.0.1:${port}/callback`,
);
const goServerClient = `id=demo-server,redirect=${serverCallbacks.join("|")}`;
/** The URL each started service answers on, by key, for the services started after it. */
const urls = {};

const services = [
  {
    name: "Docs (API reference and guides)",
    enabled: () => existsSync(join(docsDir, "index.html")) || "apps/docs/dist/index.html is missing: run `pnpm build`",
    port: Number(process.env.DOCS_PORT ?? 8080),
    start: (port) => serveStatic(docsDir, port),
  },
  {
    key: "sandbox",
    name: "Sandbox tenant",
    enabled: () => existsSync(sandboxCli) || "packages/sandbox/dist/cli.js is missing: run `pnpm build`",
    port: Number(process.env.SANDBOX_PORT ?? 4020),
    command: process.execPath,
    args: (port) => [
      sandboxCli,
      "--port",
      String(port),
      "--client",
      sandboxClient,
      "--client",
      cliClient,
      "--client",
      goServerClient,
    ],
    ready: /listening on (\S+)/i,
    note:
      `OAuth client demo, redirect http://localhost:${webPort}/callback or http://127.0.0.1:${webPort}/callback; ` +
      `demo-cli, redirect http://127.0.0.1:53682/callback; demo-server, redirect ${serverCallbacks.join(" or ")} (the Go, TypeScript, Python and Java servers)`,
  },
  {
    name: "Example web app (sign in by clicking)",
    enabled: () =>
      !existsSync(join(exampleDir, "index.html"))
        ? "apps/example-web/dist/index.html is missing: run `pnpm build`"
        : !urls.sandbox
          ? "needs the sandbox"
          : true,
    port: webPort,
    start: async (port) => {
      const { serveExampleWeb } = await import("../../apps/example-web/serve.mjs");
      const web = await serveExampleWeb({ port, host: HOST, tenantUrl: urls.sandbox, clientId: "demo" });
      return { url: `http://localhost:${web.port}/`, stop: () => web.close() };
    },
  },
  {
    name: "Example Go server (many users, each connecting their own tenant account)",
    enabled: () =>
      !existsSync(goServer)
        ? "apps/example-go-server/bin is missing: run `pnpm build` (it needs Go)"
        : !urls.sandbox
          ? "needs the sandbox"
          : true,
    port: goServerPort,
    command: goServer,
    args: () => [],
    env: (port) => ({ PORT: String(port), TENANT_URL: urls.sandbox, CLIENT_ID: "demo-server" }),
    ready: /listening on (\S+)/i,
  },
  {
    name: "Example TypeScript server (the same app on createSessions and Hono)",
    enabled: () =>
      !existsSync(tsServer)
        ? "apps/example-ts-server/dist/main.js is missing: run `pnpm build`"
        : !urls.sandbox
          ? "needs the sandbox"
          : true,
    port: tsServerPort,
    command: process.execPath,
    args: () => [tsServer],
    env: (port) => ({ PORT: String(port), TENANT_URL: urls.sandbox, CLIENT_ID: "demo-server" }),
    ready: /listening on (\S+)/i,
  },
  {
    name: "Example Python server (the same app on AsyncSessions and Starlette)",
    enabled: () =>
      !existsSync(python)
        ? "the Python venv (.venv) is missing: run `node tools/python/venv.mjs` (it needs Python 3.11 or later)"
        : !urls.sandbox
          ? "needs the sandbox"
          : true,
    port: pythonServerPort,
    command: python,
    args: () => [pythonServer],
    env: (port) => ({ PORT: String(port), TENANT_URL: urls.sandbox, CLIENT_ID: "demo-server" }),
    // uvicorn says so on its log (stderr).
    ready: /Uvicorn running on (http:\/\/\S+)/,
  },
  {
    name: "Example Java server (the same app on Sessions and the JDK's HttpServer)",
    enabled: () =>
      !existsSync(javaServerCommand)
        ? "apps/example-java-server/target is missing: run `pnpm build` (it needs a JDK)"
        : !urls.sandbox
          ? "needs the sandbox"
          : true,
    port: javaServerPort,
    command: () => JSON.parse(readFileSync(javaServerCommand, "utf8"))[0],
    args: () => JSON.parse(readFileSync(javaServerCommand, "utf8")).slice(1),
    cwd: javaServerDir,
    env: (port) => ({ PORT: String(port), TENANT_URL: urls.sandbox, CLIENT_ID: "demo-server" }),
    ready: /listening on (\S+)/i,
  },
];

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/** Serves `dir` on HOST:port (a free port when it is taken); extension-less paths get index.html. */
async function serveStatic(dir, port) {
  const server = createServer((req, res) => {
    let path;
    try {
      path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname));
    } catch {
      res.writeHead(400).end("bad request");
      return;
    }
    const file = extname(path) === "" ? join(dir, "index.html") : join(dir, path);
    if (!file.startsWith(dir + sep)) {
      res.writeHead(404).end("not found");
      return;
    }
    readFile(file).then(
      (body) =>
        res
          .writeHead(200, {
            "Content-Type": MIME[extname(file)] ?? "application/octet-stream",
            "Cache-Control": "no-cache",
          })
          .end(body),
      () => res.writeHead(404).end("not found"),
    );
  });
  const actual = await listen(server, port);
  return {
    url: `http://${HOST}:${actual}/`,
    stop: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Listens on `port`, or on a free port when it is taken; resolves with the port. */
function listen(server, port) {
  return new Promise((resolve, reject) => {
    const onError = (error) => {
      if (error.code === "EADDRINUSE" && port !== 0) {
        console.log(`  port ${port} is taken; using a free one`);
        server.listen(0, HOST);
      } else reject(error);
    };
    server.on("error", onError);
    server.once("listening", () => {
      server.off("error", onError);
      resolve(server.address().port);
    });
    server.listen(port, HOST);
  });
}

/** `preferred` when it is free on HOST, else a free port. */
async function freePort(preferred) {
  const probe = createServer();
  const port = await listen(probe, preferred);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const running = [];
let stopping = false;

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    running.map(async (service) => {
      try {
        await service.stop();
      } catch {
        /* already gone */
      }
    }),
  );
  process.exit(code);
}
// Stopping on a signal is the normal end, so it exits 0: pnpm reports any other status (130
// included) as "Command failed". The root script `exec`s this file so that no shell stands between
// pnpm and it: the shell would get Ctrl-C's SIGINT too and die of it, which pnpm reports the same way.
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));
process.on("SIGHUP", () => void stopAll(0));

/** Starts a child in its own process group, so stopping it stops its children too. */
async function startChild(service, port) {
  const command = typeof service.command === "function" ? service.command() : service.command;
  const child = spawn(command, service.args(port), {
    cwd: service.cwd ?? root,
    env: { ...process.env, ...service.env?.(port) },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const signal = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      /* already gone */
    }
  };
  const stop = async () => {
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };
  running.push({ stop });
  // uvicorn's INFO lines (its start-up) are left out; anything else a service says there is shown.
  child.stderr.on("data", (chunk) => {
    const said = String(chunk)
      .split("\n")
      .filter((line) => line.trim() && !/^INFO: /.test(line));
    if (said.length) process.stderr.write(`[${service.name}] ${said.join("\n")}\n`);
  });
  const url = await new Promise((resolve, reject) => {
    const onOutput = (chunk) => {
      const match = service.ready.exec(String(chunk));
      if (match) resolve(match[1] ?? `http://${HOST}:${port}`);
    };
    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`exited with code ${code} before it was ready`)));
  });
  child.once("exit", (code) => {
    if (!stopping) {
      console.error(`✖ ${service.name} exited (${code}); stopping.`);
      void stopAll(1);
    }
  });
  return url;
}

console.log("Starting… press Ctrl-C to stop.");
const lines = [];
for (const service of services) {
  const enabled = service.enabled();
  if (enabled !== true) {
    console.log(`- ${service.name}: ${enabled}`);
    continue;
  }
  try {
    let url;
    if (service.start) {
      const started = await service.start(service.port);
      running.push(started);
      url = started.url;
    } else {
      url = await startChild(service, await freePort(service.port));
    }
    if (service.key) urls[service.key] = url.replace(/\/$/, "");
    lines.push(`✔ ${service.name}: ${url}${service.note ? `  (${service.note})` : ""}`);
  } catch (error) {
    console.error(`✖ ${service.name} did not start: ${error.message}`);
    await stopAll(1);
  }
}
if (!stopping) console.log(`\n${lines.join("\n")}\n\nPress Ctrl-C to stop.`);
