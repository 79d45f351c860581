// The browser actors' host: one Chromium whose tabs are the actors, and the page they open. The
// tabs share one origin, so they share localStorage and Web Locks, which is what the browser
// target is about: N tabs released at once after expiry make one refresh.
//
// Run as a program (`node host.mjs`), it prints the host as one JSON line (cdpEndpoint, pageUrl,
// redirectUri) and stays up until SIGINT or SIGTERM.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { CHROMIUM_FLAGS, findChromium } from "@tenant-integration/browser-testing";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Beside the offline flags: no throttling of timers in tabs that are not in front, so a waiting tab
 * wakes when its lock or its clock says, not when Chromium gets round to it.
 */
const UNTHROTTLED = [
  "--disable-background-timer-throttling",
  "--disable-renderer-backgrounding",
  "--disable-backgrounding-occluded-windows",
];

/** How long Chromium may take to print its DevTools address. */
const LAUNCH_TIMEOUT_MS = 30_000;

/** tab.mjs and the kit, bundled for the page. */
async function bundleTab() {
  const built = await build({
    entryPoints: [join(here, "tab.mjs")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return built.outputFiles[0].text;
}

/**
 * Serves the page (at `/` and at the redirect URI's path) and its script on a free loopback port,
 * and `/reset`, a page that empties the origin's localStorage and says so with `POST /reset-done`.
 */
async function servePage(script) {
  const head = '<!doctype html><meta charset="utf-8"><title>conformance actor</title><link rel="icon" href="data:,">';
  const html = head + '<script src="/tab.js"></script>';
  const resetHtml = head + '<script>localStorage.clear(); fetch("/reset-done", { method: "POST" });</script>';
  const resets = new Set();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path === "/tab.js") res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(script);
    else if (path === "/" || path === "/callback")
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
    else if (path === "/reset") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(resetHtml);
    else if (path === "/reset-done" && req.method === "POST") {
      res.writeHead(204).end();
      for (const done of resets) done();
      resets.clear();
    } else res.writeHead(404).end();
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  /** Resolves at the next `POST /reset-done`. */
  const resetDone = () => new Promise((resolve) => resets.add(resolve));
  return { server, origin: `http://127.0.0.1:${server.address().port}`, resetDone };
}

/**
 * Closes every tab of the page's origin (the tabs of actors that were killed stay open: an actor
 * cannot close its tab after SIGKILL), then empties the origin's localStorage, through the DevTools
 * HTTP endpoints (`/json/list`, `/json/new`, `/json/close`).
 */
async function resetTabs(cdpEndpoint, origin, resetDone) {
  const devtools = new URL(cdpEndpoint.replace(/^ws/, "http")).origin;
  /** The answer's text (`/json/close` answers "Target is closing", labelled JSON). */
  const ask = async (path, method = "GET") => {
    const response = await fetch(devtools + path, { method });
    const text = await response.text();
    if (!response.ok) throw new Error(`DevTools ${path} answered ${response.status}: ${text}`);
    return text;
  };
  const close = (id) => ask(`/json/close/${id}`);
  for (const target of JSON.parse(await ask("/json/list"))) {
    if (target.type === "page" && target.url.startsWith(origin + "/")) await close(target.id);
  }
  const done = resetDone();
  const tab = JSON.parse(await ask(`/json/new?${origin}/reset`, "PUT"));
  let timer;
  const late = new Promise(
    (_, reject) => (timer = setTimeout(() => reject(new Error("the reset page did not report within 10 s")), 10_000)),
  );
  try {
    await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
    await close(tab.id);
  }
}
/** Launches Chromium with a DevTools port and resolves with its `ws://` endpoint. */
function launchChromium(userDataDir) {
  const args = [
    ...CHROMIUM_FLAGS,
    ...UNTHROTTLED,
    `--user-data-dir=${userDataDir}`,
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "about:blank",
  ];
  const child = spawn(findChromium(), args, { stdio: ["ignore", "ignore", "pipe"] });
  const endpoint = new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(
      () => fail(new Error(`Chromium printed no DevTools address within ${LAUNCH_TIMEOUT_MS} ms`)),
      LAUNCH_TIMEOUT_MS,
    );
    const fail = (error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${error.message}\n${err}`));
    };
    const onData = (chunk) => {
      err += chunk;
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (!found) return;
      clearTimeout(timer);
      // Keep draining stderr so Chromium never blocks on a full pipe.
      child.stderr.off("data", onData).resume();
      resolve(found[1]);
    };
    child.stderr.setEncoding("utf8").on("data", onData);
    child.once("error", fail);
    child.once("exit", (code, signal) =>
      fail(new Error(`Chromium exited (${signal ?? code}) before printing its DevTools address`)),
    );
  });
  return { child, endpoint };
}

/** Stops Chromium: SIGTERM, then SIGKILL after two seconds. */
async function stopChromium(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts the host of the browser actors: bundles tab.mjs, serves the page on 127.0.0.1 at a free
 * port, and launches one Chromium with a DevTools port and a fresh profile.
 *
 * @param {{ tenant?: string }} [options] - the sandbox's origin, optional: the page learns it from
 *   each actor's start, and the sandbox needs `redirectUri` registered before it starts, so the host
 *   usually starts first
 * @returns {Promise<{ cdpEndpoint: string, pageUrl: string, redirectUri: string, reset(): Promise<void>, close(): Promise<void> }>}
 *   `redirectUri` is the one to register on the sandbox: the page's origin, path `/callback`.
 *   `reset()`, between runs (never during one), closes the tabs still open on the page (those of
 *   killed actors) and empties the origin's localStorage: the tabs of a run share it, and with one
 *   sandbox for all runs the storage keys (tenant origin and client) are the same in every run, so
 *   a run would otherwise start with the previous run's session.
 * @example
 * ```js
 * const host = await startBrowserHost({ tenant: sandbox.url });
 * // CONFORMANCE_ACTOR={…, "browser": { "cdpEndpoint": host.cdpEndpoint, "pageUrl": host.pageUrl }}
 * await host.reset(); // between runs
 * await host.close();
 * ```
 */
export async function startBrowserHost({ tenant } = {}) {
  if (tenant !== undefined) new URL(tenant); // a bad origin fails here, not in every tab
  const { server, origin, resetDone } = await servePage(await bundleTab());
  const userDataDir = mkdtempSync(join(tmpdir(), "conformance-chromium-"));
  const { child, endpoint } = launchChromium(userDataDir);
  // A host process that ends without close() (an uncaught error, process.exit) takes its browser
  // along instead of leaving it running; only SIGKILL of the host can still leave one behind.
  const orphanGuard = () => child.kill("SIGKILL");
  process.once("exit", orphanGuard);
  const close = async () => {
    process.off("exit", orphanGuard);
    await stopChromium(child);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    // Chromium's helper processes may still be writing to the profile just after the browser exits.
    rmSync(userDataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  try {
    const cdpEndpoint = await endpoint;
    const reset = () => resetTabs(cdpEndpoint, origin, resetDone);
    return { cdpEndpoint, pageUrl: `${origin}/`, redirectUri: `${origin}/callback`, reset, close };
  } catch (error) {
    await close();
    throw error;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const host = await startBrowserHost();
  const { close, reset: _reset, ...shown } = host;
  process.stdout.write(JSON.stringify(shown) + "\n");
  for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => close().then(() => process.exit(0)));
}
