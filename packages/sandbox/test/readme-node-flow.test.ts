/**
 * The token manager's README, followed as written: its "Node command-line flow" sample runs as a
 * program against this sandbox, with only the reader's own values put in (the tenant's address and
 * the registered loopback port). A person plays the browser: opens the printed URL, which the
 * sandbox auto-approves. The runs show what the README promises a command-line tool:
 *
 * 1. the first run signs in and calls the API;
 * 2. a run 16 minutes later (past the 15-minute access token) refreshes from the file, calls the
 *    API, and logs out with `revoke()`;
 * 3. the run after that has to sign in again.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { freePort } from "@tenant-integration/prism-testing";
import { readmeSamples } from "@tenant-integration/readme-samples";
import { approveInBrowser, programDirectory, runProgram, toJavaScript } from "@tenant-integration/readme-samples/run";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  DEMO_USER,
  startSandbox,
  type RunningSandbox,
  type SandboxEvent,
} from "../src/index.js";

const README = join(
  dirname(createRequire(import.meta.url).resolve("@tenant-integration/token-manager/package.json")),
  "README.md",
);
const README_TENANT = "https://acme.tenant.test";
const README_REDIRECT = "http://127.0.0.1:53682/callback";
const README_CLIENT = "demo-integration";
const LOGOUT = "// `my-cli logout`:";
const LATER_SECONDS = ACCESS_TOKEN_LIFETIME_SECONDS + 60;

/** The README's Node sample as JavaScript, with the reader's tenant and redirect URI. */
function program(sample: string, tenant: string, redirectUri: string): string {
  return toJavaScript(sample.replaceAll(README_TENANT, tenant).replaceAll(README_REDIRECT, redirectUri));
}

let running: RunningSandbox;
let work: string;
let home: string;
let sample: string;
let redirectUri: string;

beforeAll(async () => {
  const samples = readmeSamples(README);
  sample = samples.find((s) => s.includes("waitForCallback(")) ?? "";
  // A free port rather than the sample's fixed 53682, so that it never collides with another test.
  redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
  running = await startSandbox({
    clients: [{ id: README_CLIENT, redirectUris: [redirectUri] }],
    autoApprove: true,
    testClock: true,
  });
  work = programDirectory(fileURLToPath(new URL("..", import.meta.url)), "readme-node-flow-");
  home = mkdtempSync(join(tmpdir(), "readme-node-flow-home-"));
});

afterAll(async () => {
  await running?.close();
  for (const dir of [work, home]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `source` as the user's tool, `offsetSeconds` later, opening the authorize URL it prints. */
async function run(name: string, source: string, offsetSeconds = 0) {
  const result = await runProgram({
    dir: work,
    name,
    source,
    env: { HOME: home },
    clockOffsetMs: offsetSeconds * 1000,
    openAuthorizeUrl: approveInBrowser,
  });
  return { ...result, askedToSignIn: result.openedAuthorizeUrl && result.stdout.includes("Open this URL to sign in:") };
}

/** The sandbox's token and revoke events since `seq`, as `endpoint grant: outcome`. */
function eventsAfter(seq: number): string[] {
  return running.sandbox
    .events()
    .filter((e: SandboxEvent) => e.seq > seq)
    .map((e: SandboxEvent) => `${e.endpoint}${e.grantType ? ` ${e.grantType}` : ""}: ${e.outcome}`);
}

const lastSeq = (): number => running.sandbox.events().at(-1)?.seq ?? 0;
const tokenFile = (): string => join(home, ".config", "my-cli", "tokens.json");
/** The refresh token stored in the tool's file (the test reads it to try it afterwards). */
function storedRefreshToken(): string {
  const [record] = Object.values(JSON.parse(readFileSync(tokenFile(), "utf8")) as Record<string, string>);
  return (JSON.parse(record!) as { refresh_token: string }).refresh_token;
}

describe("the token manager README's Node command-line flow, run as written against the sandbox", () => {
  it("is in the README, with its sign-in and its logout", () => {
    expect(sample).toContain("createTokenManager(");
    expect(sample).toContain(README_TENANT);
    expect(sample).toContain(README_REDIRECT);
    expect(sample).toContain(LOGOUT);
  });

  it("signs in, refreshes 16 minutes later, logs out, and then asks to sign in again", async () => {
    const untilLogout = program(sample.slice(0, sample.indexOf(LOGOUT)), running.url, redirectUri);
    const whole = program(sample, running.url, redirectUri);

    // 1. First run: no tokens yet, so the tool signs in, then calls the API.
    let seq = lastSeq();
    const first = await run("first", untilLogout);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.askedToSignIn).toBe(true);
    expect(first.stdout).toContain(DEMO_USER.name);
    expect(eventsAfter(seq)).toEqual(["token authorization_code: ok"]);
    expect(statSync(tokenFile()).mode & 0o777).toBe(0o600);
    const firstRefreshToken = storedRefreshToken();

    // 2. Sixteen minutes later, on both clocks: the access token has expired. The tool reads the
    //    file, refreshes (rotating the refresh token), calls the API and logs out.
    running.sandbox.clock.advance(LATER_SECONDS);
    seq = lastSeq();
    const later = await run("later", whole, LATER_SECONDS);
    expect(later.stderr).toBe("");
    expect(later.code).toBe(0);
    expect(later.askedToSignIn).toBe(false);
    expect(later.stdout).toContain(DEMO_USER.name);
    expect(eventsAfter(seq)).toEqual(["token refresh_token: ok", "revoke: ok"]);
    expect(Object.keys(JSON.parse(readFileSync(tokenFile(), "utf8")) as object)).toEqual([]);

    // The refresh token of the first run was rotated away, and its family ended by the logout.
    const reuse = await fetch(`${running.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ grant_type: "refresh_token", refresh_token: firstRefreshToken, client_id: README_CLIENT }),
    });
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as { error: string }).error).toBe("invalid_grant");

    // 3. After the logout, the next run has to sign in again.
    const again = await run("again", untilLogout, LATER_SECONDS);
    expect(again.code).toBe(0);
    expect(again.askedToSignIn).toBe(true);
    expect(again.stdout).toContain(DEMO_USER.name);
  });
});
