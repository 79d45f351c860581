// The browser actor (target `browser`): one tab of the host's shared Chromium (host.mjs), opened in
// the browser's default context so that it shares localStorage and Web Locks with the other actors'
// tabs. The manager runs in the tab (tab.mjs); this process relays the protocol between stdin/stdout
// and the tab, and plays the browser's navigation at the authorize endpoint.
// Protocol: spec/conformance/PROTOCOL.md.
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";
import { EVENT_MARK } from "./event-mark.mjs";

const config = JSON.parse(process.env.CONFORMANCE_ACTOR ?? "null");
if (!config?.browser?.cdpEndpoint || !config.browser.pageUrl) {
  process.stderr.write("CONFORMANCE_ACTOR must hold a browser actor's config, with browser: {cdpEndpoint, pageUrl}\n");
  process.exit(2);
}

/** One protocol line on stdout; stdout carries nothing else. */
const say = (message) => process.stdout.write(JSON.stringify(message) + "\n");

/** The answer to command `id` for a failure outside the kit (the tab gone, the authorize request). */
const unexpected = (id, error) => ({
  id,
  ok: false,
  error: { code: "UNEXPECTED", name: error?.name ?? "Error", message: String(error?.message ?? error) },
});

/**
 * Requests the authorize URL without following the redirect (the sandbox auto-approves) and returns
 * the Location, as a browser's navigation would reach the redirect URI. The tab cannot: its
 * `fetch(…, { redirect: "manual" })` gets an opaque redirect. The pending sign-in stays in the tab.
 */
async function authorize(url) {
  if (new URL(url).origin !== new URL(config.tenant).origin) throw new Error("the authorize URL is not on the tenant");
  const response = await fetch(url, { redirect: "manual", headers: { "Sandbox-Actor": config.name } });
  await response.arrayBuffer();
  const location = response.headers.get("location");
  if (response.status !== 302 || !location) throw new Error(`authorize answered ${response.status} without a redirect`);
  return new URL(location, url).href;
}

const browser = await chromium.connectOverCDP(config.browser.cdpEndpoint);
// The default context is the browser's own profile, shared by every tab: never browser.newContext().
const context = browser.contexts()[0];
const page = await context.newPage();
let closing = false;

// The tab's events and log lines come as marked console messages (tab.mjs says why not a binding).
page.on("console", (message) => {
  const text = message.text();
  if (text.startsWith(EVENT_MARK)) {
    if (!closing) say(JSON.parse(text.slice(EVENT_MARK.length)));
  } else process.stderr.write(`tab console.${message.type()}: ${text}\n`);
});
page.on("pageerror", (error) => process.stderr.write(`tab error: ${error.message}\n`));
page.on("crash", () => quit(1, "the tab crashed"));
browser.on("disconnected", () => closing || quit(1, "the browser went away"));
await page.goto(config.browser.pageUrl);
await page.waitForFunction(() => globalThis.conformanceActor !== undefined);

const { browser: _browser, ...tabConfig } = config;
const started = await page.evaluate((c) => globalThis.conformanceActor.start(c), tabConfig);
if (!started.ok) {
  process.stderr.write(`the manager did not start: ${started.error.code}: ${started.error.message}\n`);
  await quit(1);
}
say({ event: "ready", pid: process.pid, target: "browser", runtime: `chromium ${browser.version()}` });

/** Closes this actor's tab only (never the shared browser) and exits. */
async function quit(status, why) {
  if (why) process.stderr.write(why + "\n");
  if (closing) return;
  closing = true;
  await page.close().catch(() => {});
  process.exit(status);
}

/** Runs one command in the tab; resolves with its answer, never rejecting. */
async function inTab(command) {
  try {
    return await page.evaluate((c) => globalThis.conformanceActor.run(c), command);
  } catch (error) {
    // The tab went away, or its script failed outside the manager.
    return unexpected(command.id, error);
  }
}

/** `sign-in`: the tab begins, this process plays the navigation to the redirect, the tab completes. */
async function signIn(command) {
  const begun = await inTab({ id: command.id, cmd: "sign-in" });
  if (!begun.ok) return begun;
  let callbackUrl;
  try {
    callbackUrl = await authorize(begun.result.authorize);
  } catch (error) {
    return unexpected(command.id, error);
  }
  return inTab({ id: command.id, cmd: "sign-in", callbackUrl });
}

/** Relays one command to the tab and says its answer; commands overlap freely. */
async function relay(command) {
  if (command.cmd === "exit") {
    // The tab's manager is closed first; a close that fails is the answer, and the exit status 1.
    const closed = await inTab({ id: command.id, cmd: "close" });
    say(closed);
    return quit(closed.ok ? 0 : 1);
  }
  const answer = command.cmd === "sign-in" ? await signIn(command) : await inTab(command);
  if (!closing) say(answer);
}

/** Commands still running: answered before the actor leaves when stdin closes. */
const running = new Set();
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  let command;
  try {
    command = JSON.parse(line);
  } catch {
    process.stderr.write(`not a JSON line on stdin: ${line.slice(0, 200)}\n`);
    return;
  }
  const work = relay(command);
  running.add(work);
  void work.finally(() => running.delete(work));
});
// No more commands: answer the ones running, close the manager and the tab, and leave.
lines.on("close", async () => {
  await Promise.allSettled(running);
  const closed = await inTab({ id: 0, cmd: "close" });
  if (!closed.ok) process.stderr.write(`the manager did not close: ${closed.error.code}: ${closed.error.message}\n`);
  await quit(closed.ok ? 0 : 1);
});
