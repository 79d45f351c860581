// The built `tenant` command against a real sandbox, with the test playing the browser: it reads the
// printed authorize URL, approves on the consent page with fetch, and follows the redirect to the
// CLI's loopback callback. The sandbox registers the CLI's redirect URI with its fixed port and
// matches it exactly, as the service does; the port is chosen free at run time and given to the CLI.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { freePort } from "@tenant-integration/prism-testing";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const CLIENT_ID = "cli";

let sandbox: RunningSandbox;
let configDir: string;
let redirectPort: number;
const children: ChildProcess[] = [];

beforeEach(async () => {
  redirectPort = await freePort();
  sandbox = await startSandbox({
    port: 0,
    host: "127.0.0.1",
    testClock: true,
    // Exact matching, no port exception: only this URI, with this port, is registered.
    clients: [{ id: CLIENT_ID, redirectUris: [`http://127.0.0.1:${redirectPort}/callback`] }],
  });
  configDir = await mkdtemp(join(tmpdir(), "tenant-cli-"));
});

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await sandbox.close();
  await rm(configDir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Starts the CLI; it is killed after 30 s at the latest, and in afterEach. */
function tenant(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: {
      PATH: process.env["PATH"],
      HOME: configDir,
      TENANT_CONFIG_DIR: configDir,
      TENANT_REDIRECT_PORT: String(redirectPort),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve(code);
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/** Waits until the CLI printed the authorize URL and returns it. */
async function authorizeUrl(run: Run): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const match = /^\s*(http:\/\/\S+\/oauth\/authorize\?\S+)$/m.exec(run.stdout());
    if (match?.[1] !== undefined) return match[1];
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no authorize URL printed; stdout: ${run.stdout()} stderr: ${run.stderr()}`);
}

/** Plays the browser: opens the consent page, clicks Approve (a form POST), follows the redirect. */
async function approveInBrowser(url: string): Promise<{ callback: URL; page: string }> {
  const consent = await fetch(url);
  expect(consent.status).toBe(200);
  const requestId = /name="request_id" value="([^"]+)"/.exec(await consent.text())?.[1] ?? "";
  const decision = await fetch(`${sandbox.url}/__sandbox/consent`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ request_id: requestId, decision: "approve" }),
    redirect: "manual",
  });
  expect(decision.status).toBe(302);
  const callback = new URL(decision.headers.get("location") ?? "");
  const page = await (await fetch(callback)).text();
  return { callback, page };
}

async function login(): Promise<Run> {
  const run = tenant(["login", "--no-open", "--tenant", sandbox.url, "--client-id", CLIENT_ID, "--timeout", "30"]);
  const url = await authorizeUrl(run);
  await approveInBrowser(url);
  expect(await run.exit).toBe(0);
  return run;
}

const tokenFile = () => join(configDir, `${new URL(sandbox.url).host.replace(":", "_")}-${CLIENT_ID}.json`);

describe("tenant login", () => {
  it("stops with a message naming the redirect URI when another program holds its port", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(redirectPort, "127.0.0.1", resolve));
    try {
      // A wait longer than the 30 s after which the test kills the CLI: an exit code of 1 (not a
      // kill) shows the failed listen left no timer behind to hold the process open.
      const run = tenant(["login", "--no-open", "--tenant", sandbox.url, "--client-id", CLIENT_ID, "--timeout", "120"]);
      expect(await run.exit).toBe(1);
      expect(run.stderr()).toContain(`http://127.0.0.1:${redirectPort}/callback is in use by another program`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("stops at once, before any browser, when the tenant does not know the redirect URI (another port)", async () => {
    const otherPort = await freePort();
    // A wait far longer than the test: only the tenant's error page can end it this early.
    const run = tenant([
      "login",
      "--no-open",
      "--port",
      String(otherPort),
      "--tenant",
      sandbox.url,
      "--client-id",
      CLIENT_ID,
      "--timeout",
      "300",
    ]);
    expect(await run.exit).toBe(2);
    expect(run.stderr()).toContain("does not accept this redirect URI");
    expect(run.stderr()).toContain(`http://127.0.0.1:${otherPort}/callback`);
    expect(run.stdout()).not.toContain("/oauth/authorize?");
  });

  it("signs in through the registered loopback redirect URI, its fixed port included, and stores the tokens with mode 0600", async () => {
    const run = tenant(["login", "--no-open", "--tenant", sandbox.url, "--client-id", CLIENT_ID, "--timeout", "30"]);
    const url = new URL(await authorizeUrl(run));
    const redirectUri = new URL(url.searchParams.get("redirect_uri") ?? "");
    expect(redirectUri.href).toBe(`http://127.0.0.1:${redirectPort}/callback`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");

    const { callback, page } = await approveInBrowser(url.href);
    expect(callback.origin).toBe(redirectUri.origin);
    expect(page).toContain("return to the terminal");
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toContain(`Signed in to ${sandbox.url} as client cli`);

    expect((await stat(tokenFile())).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(await readFile(tokenFile(), "utf8")) as Record<string, string>;
    const tokens = JSON.parse(Object.entries(stored).find(([key]) => key.endsWith(":tokens"))?.[1] ?? "{}") as Record<
      string,
      string
    >;
    expect(tokens["refresh_token"]).toMatch(/.+/);
    expect(run.stdout() + run.stderr()).not.toContain(tokens["refresh_token"]);
    expect(run.stdout() + run.stderr()).not.toContain(tokens["access_token"]);
    expect(sandbox.sandbox.events().map((event) => [event.grantType, event.outcome])).toEqual([
      ["authorization_code", "ok"],
    ]);
  });

  it("still prints the URL and completes when no browser opener exists", async () => {
    const run = tenant(["login", "--tenant", sandbox.url, "--client-id", CLIENT_ID, "--timeout", "30"], {
      PATH: join(configDir, "no-such-bin"),
    });
    await approveInBrowser(await authorizeUrl(run));
    expect(await run.exit).toBe(0);
    expect(run.stdout()).not.toContain("Opening your browser");
    expect(run.stderr()).toBe("");
  });

  it("fails with exit code 1 and says so when no browser comes back before the timeout", async () => {
    const run = tenant(["login", "--no-open", "--tenant", sandbox.url, "--client-id", CLIENT_ID, "--timeout", "0.5"]);
    expect(await run.exit).toBe(1);
    expect(run.stderr()).toContain("The sign-in did not complete");
    expect(await readdir(configDir)).toEqual([]);
  });

  it("fails with exit code 1 when the sign-in is denied on the consent page", async () => {
    const run = tenant(["login", "--no-open", "--tenant", sandbox.url, "--client-id", CLIENT_ID, "--timeout", "30"]);
    const consent = await fetch(await authorizeUrl(run));
    const requestId = /name="request_id" value="([^"]+)"/.exec(await consent.text())?.[1] ?? "";
    const decision = await fetch(`${sandbox.url}/__sandbox/consent`, {
      method: "POST",
      body: new URLSearchParams({ request_id: requestId, decision: "deny" }),
      redirect: "manual",
    });
    await fetch(decision.headers.get("location") ?? "");
    expect(await run.exit).toBe(1);
    expect(run.stderr()).toContain("denied");
    expect(sandbox.sandbox.events()).toEqual([]);
  });
});

describe("tenant whoami and logout", () => {
  it("prints the user, refreshes after the sandbox's 401 for an expired token, and after logout fails with exit code 1", async () => {
    await login();

    const first = tenant(["whoami", "--tenant", sandbox.url, "--client-id", CLIENT_ID]);
    expect(await first.exit).toBe(0);
    expect(first.stdout()).toContain("name: Ada Lovelace");
    expect(first.stdout()).toContain("email: ada@example.org");

    sandbox.sandbox.clock.advance(16 * 60); // past the 15-minute access token
    const before = await readFile(tokenFile(), "utf8");
    const refreshed = tenant(["whoami", "--json"]); // tenant and client of the last login
    expect(await refreshed.exit).toBe(0);
    expect(JSON.parse(refreshed.stdout())).toMatchObject({ name: "Ada Lovelace" });
    // The sandbox's clock moved, the CLI's did not: the access token it holds looks valid to it, the
    // sandbox answers 401 (the contract's assumption, RFC 6750 §3.1), and the client's retry refreshes
    // once, which the sandbox accepts after the access token expired (the description has the refresh
    // made before; what the service does later is not shown).
    const refreshes = sandbox.sandbox.events().filter((event) => event.grantType === "refresh_token");
    expect(refreshes.map((event) => event.outcome)).toEqual(["ok"]);
    expect(await readFile(tokenFile(), "utf8")).not.toBe(before);

    const out = tenant(["logout", "--tenant", sandbox.url, "--client-id", CLIENT_ID]);
    expect(await out.exit).toBe(0);
    expect(out.stdout()).toContain("the token was revoked");
    const revokes = sandbox.sandbox.events().filter((event) => event.endpoint === "revoke");
    expect(revokes.map((event) => [event.clientId, event.outcome])).toEqual([["cli", "ok"]]);
    await expect(stat(tokenFile())).rejects.toMatchObject({ code: "ENOENT" });

    const after = tenant(["whoami", "--tenant", sandbox.url, "--client-id", CLIENT_ID]);
    expect(await after.exit).toBe(1);
    expect(after.stderr()).toContain(`Not signed in to ${sandbox.url} as client cli. Run \`tenant login\` first.`);
  });

  it("parallel whoami runs after expiry make one refresh among them, and all print the user", async () => {
    await login();
    sandbox.sandbox.clock.advance(16 * 60); // past the 15-minute access token
    const runs = Array.from({ length: 5 }, () => tenant(["whoami", "--json"]));
    expect(await Promise.all(runs.map((run) => run.exit))).toEqual([0, 0, 0, 0, 0]);
    for (const run of runs) expect(JSON.parse(run.stdout())).toMatchObject({ name: "Ada Lovelace" });
    const refreshes = sandbox.sandbox.events().filter((event) => event.grantType === "refresh_token");
    expect(refreshes.map((event) => event.outcome)).toEqual(["ok"]);
  });

  it("logout without a session succeeds and says there was nothing to revoke", async () => {
    const run = tenant(["logout", "--tenant", sandbox.url, "--client-id", CLIENT_ID]);
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toContain("nothing to revoke");
    expect(sandbox.sandbox.events()).toEqual([]);
  });
});

describe("tenant usage", () => {
  it("prints the help with exit code 0", async () => {
    const run = tenant(["--help"]);
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toContain("tenant login");
    expect(run.stdout()).toContain("Exit codes: 0 success, 1 failure, 2 bad usage.");
  });

  it.each([
    ["an unknown command", ["frobnicate"], 'unknown command "frobnicate"'],
    ["an unknown flag", ["whoami", "--colour"], "--colour"],
    ["a login flag on whoami", ["whoami", "--no-open"], "--no-open is an option of login only"],
    ["a tenant that is not a URL", ["whoami", "--tenant", "nope"], "is not a URL"],
    ["a tenant over plain http to another host", ["whoami", "--tenant", "http://tenant.example"], "Invalid tenant"],
  ])("exits 2 on %s, with a message", async (_name, args, message) => {
    const run = tenant(args);
    expect(await run.exit).toBe(2);
    expect(run.stderr()).toContain(message);
  });
});
