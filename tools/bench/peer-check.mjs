// Proof that a typical app works before its bytes count (tools/bench/README.md, "Fair baselines"):
// the app of typical-app/ is bundled as sizes.mjs bundles it, with typical-app/tenant.js pointing at
// a sandbox, and run in Node with the few browser globals it uses (localStorage, sessionStorage,
// location, a clock the check can move). It must sign in (the authorize redirect, the code exchange),
// read the user, and after the access token expired serve CONCURRENT calls together with exactly one
// refresh (a second presentation of a rotated refresh token ends a real session), then sign out,
// revoking a token of the session at the tenant.
//
// `checkTypicalApps(files)` starts one sandbox and checks each app in a fresh Node process of its own
// (`node peer-check.mjs <app file> <sandbox url>`, which prints { ok: true, refreshes } or
// { ok: false, reason }), so no app sees another's globals. `node peer-check.mjs` alone checks every
// app of typical-app/ and prints the verdicts.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { EXPIRE_SECONDS, startSandbox } from "../conformance/src/suite/services.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CONCURRENT = 5;
/** The apps that must work before their bytes count: the kit's and every peer's but the floor's (sizes.mjs). */
export const TYPICAL_APPS = ["kit.js", "baseline.js", "oauth2-client.js", "oidc-client-ts.js"];
/** The longest one app's check may take. */
const CHECK_TIMEOUT_MS = 30_000;
const CLIENT_ID = "demo-integration";
const REDIRECT_URI = "https://app.example.org/callback";

/** Every app file checked, with its verdict: { file, ok: true, refreshes } or { file, ok: false, reason }. */
export async function checkTypicalApps(files) {
  const sandbox = await startSandbox([{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }]);
  try {
    const verdicts = [];
    for (const file of files)
      verdicts.push({ file, ...(await checkInChild(join(here, "typical-app", file), sandbox.url)) });
    return verdicts;
  } finally {
    await sandbox.close();
  }
}

function checkInChild(appFile, sandboxUrl) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), appFile, sandboxUrl], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let timedOut = false;
    // the child names each step on stderr before it starts it, so a hang can be told by its step
    const lastStep = () =>
      err
        .split("\n")
        .filter((l) => l.startsWith("step: "))
        .at(-1)
        ?.slice(6) ?? "loading the app";
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, CHECK_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("exit", (code) => {
      clearTimeout(timer);
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line));
      else if (timedOut)
        resolve({ ok: false, reason: `${lastStep()} did not finish within ${CHECK_TIMEOUT_MS / 1000} s` });
      else
        resolve({
          ok: false,
          reason: `the check exited (${code}) during ${lastStep()}: ${err.trim().split("\n").at(-1) ?? ""}`,
        });
    });
  });
}

/** A page's Storage (localStorage, sessionStorage), in memory. */
class MemoryStorage {
  #items = new Map();
  getItem(key) {
    return this.#items.has(key) ? this.#items.get(key) : null;
  }
  setItem(key, value) {
    this.#items.set(key, String(value));
  }
  removeItem(key) {
    this.#items.delete(key);
  }
  clear() {
    this.#items.clear();
  }
  key(index) {
    return [...this.#items.keys()][index] ?? null;
  }
  get length() {
    return this.#items.size;
  }
}

class CheckFailed extends Error {}

/** Runs in the child: checks one app against the sandbox at `sandboxUrl`. */
async function checkApp(appFile, sandboxUrl) {
  // The browser globals the apps use, installed before the app loads (a library may keep Date.now):
  // the window's events (oidc-client-ts listens for the page coming back) and stop().
  globalThis.window = globalThis;
  globalThis.self = globalThis;
  const page = new EventTarget();
  globalThis.addEventListener = page.addEventListener.bind(page);
  globalThis.removeEventListener = page.removeEventListener.bind(page);
  globalThis.dispatchEvent = page.dispatchEvent.bind(page);
  globalThis.stop = () => {};
  globalThis.localStorage = new MemoryStorage();
  globalThis.sessionStorage = new MemoryStorage();
  let sentTo;
  let navigated;
  const leaving = new Promise((resolve) => (navigated = resolve));
  globalThis.location = {
    href: "https://app.example.org/",
    assign(url) {
      sentTo = String(url);
      navigated();
    },
  };
  let offsetMs = 0;
  const realNow = Date.now;
  Date.now = () => realNow() + offsetMs;

  const tenant = `export const baseUrl = ${JSON.stringify(sandboxUrl)}; export const clientId = ${JSON.stringify(CLIENT_ID)}; export const redirectUri = ${JSON.stringify(REDIRECT_URI)};`;
  const bundle = await build({
    entryPoints: [appFile],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
    plugins: [
      {
        name: "tenant",
        setup: (b) => b.onLoad({ filter: /typical-app[\\/]tenant\.js$/ }, () => ({ contents: tenant, loader: "js" })),
      },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), "peer-check-"));
  const bundled = join(dir, `${basename(appFile, ".js")}.mjs`);
  writeFileSync(bundled, bundle.outputFiles[0].contents);
  const step = async (label, run) => {
    process.stderr.write(`step: ${label}\n`);
    try {
      return await run();
    } catch (error) {
      // OAuth libraries keep the tenant's answer in fields of their own (oauth4webapi: error, error_description)
      const oauth =
        typeof error?.error === "string"
          ? ` (the tenant answered ${error.error}${error.error_description ? `: ${error.error_description}` : ""})`
          : "";
      throw new CheckFailed(`${label} failed: ${error instanceof Error ? error.message : String(error)}${oauth}`);
    }
  };
  const sandbox = async (method, path, body) => {
    const response = await fetch(`${sandboxUrl}${path}`, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) throw new Error(`sandbox ${method} ${path}: ${response.status}`);
    return response.json();
  };
  const presentations = async () =>
    (await sandbox("GET", "/__sandbox/ledger")).refreshTokens.flatMap((token) => token.presentations).length;
  try {
    const app = await import(pathToFileURL(bundled).href);
    // Once signIn() sent the browser away, the page is gone: a library may leave its promise pending
    // until the page comes back (oidc-client-ts does), as a browser never settles it.
    await step("signIn()", () => Promise.race([app.signIn(), leaving]));
    if (!sentTo?.startsWith(`${sandboxUrl}/oauth/authorize?`))
      throw new CheckFailed(
        `signIn() sent the browser to ${sentTo ?? "nowhere"}, not to the tenant's /oauth/authorize`,
      );
    const authorize = await fetch(sentTo, { redirect: "manual" });
    const callback = authorize.headers.get("location");
    if (
      authorize.status !== 302 ||
      !callback?.startsWith(`${REDIRECT_URI}?`) ||
      !new URL(callback).searchParams.has("code")
    ) {
      throw new CheckFailed(
        `the tenant did not approve the sign-in (${authorize.status}): ${callback ?? (await authorize.text()).slice(0, 200)}`,
      );
    }
    globalThis.location.href = callback;
    await step("onCallback() (the code exchange)", () => app.onCallback());
    await step("currentUser() after sign-in", () => app.currentUser());
    await sandbox("POST", "/__sandbox/clock", { advanceSeconds: EXPIRE_SECONDS });
    offsetMs += EXPIRE_SECONDS * 1000;
    const before = await presentations();
    await step(`${CONCURRENT} concurrent currentUser() after the access token expired`, () =>
      Promise.all(Array.from({ length: CONCURRENT }, () => app.currentUser())),
    );
    const refreshes = (await presentations()) - before;
    if (refreshes !== 1)
      throw new CheckFailed(
        `${CONCURRENT} concurrent calls after expiry presented the refresh token ${refreshes} times, not once`,
      );
    const revocations = async () =>
      (await sandbox("GET", "/__sandbox/events")).events.filter(
        (e) => e.endpoint === "revoke" && e.outcome === "ok" && e.user !== null,
      ).length;
    const revokedBefore = await revocations();
    await step("signOut() (revocation)", () => app.signOut());
    if ((await revocations()) === revokedBefore)
      throw new CheckFailed("signOut() revoked no token of the session at the tenant's /oauth/revoke");
    return { ok: true, refreshes };
  } catch (error) {
    if (error instanceof CheckFailed) return { ok: false, reason: error.message };
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [appArg, urlArg] = process.argv.slice(2);
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (appArg && urlArg) {
    console.log(JSON.stringify(await checkApp(appArg, urlArg)));
    // an app's own timers (a library's scheduled refresh) must not keep the check alive
    process.exit(0);
  } else {
    for (const verdict of await checkTypicalApps(TYPICAL_APPS))
      console.log(`${verdict.file}: ${verdict.ok ? "works" : `DOES NOT WORK: ${verdict.reason}`}`);
  }
}
