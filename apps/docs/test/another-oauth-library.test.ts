// The guide "Using another OAuth library": its oauth4webapi program, the code of the guide itself,
// compiles, and runs against the sandbox: code exchange, refresh with rotation, revocation. Without
// its JSON adapter the same program is refused, as the guide says.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@tenant-integration/prism-testing";
import { approveInBrowser, programDirectory, runProgram, toJavaScript } from "@tenant-integration/readme-samples/run";
import { startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { codeBlocks, section } from "./support/contract.js";
import { typecheckSnippet } from "./support/typecheck.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const [TENANT, REDIRECT] = ["http://127.0.0.1:4020", "http://127.0.0.1:53682/callback"];
const ADAPTER = "[oauth.customFetch]: jsonTokenRequests,";

const guide = section("Using another OAuth library");
const [program] = codeBlocks(guide, "ts");

let sandbox: RunningSandbox;
let redirectUri: string;
let dir: string;
let home: string;

beforeEach(async () => {
  // The reader's sandbox and callback, on free ports rather than the guide's fixed ones.
  redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
  sandbox = await startSandbox({
    port: 0,
    clients: [{ id: "demo-cli", redirectUris: [redirectUri] }],
    autoApprove: true,
  });
  dir = programDirectory(docsDir, "oauth4webapi-");
  home = mkdtempSync(join(tmpdir(), "oauth4webapi-home-"));
});

afterEach(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** Runs the guide's program (or a changed copy) against the sandbox, the browser approving at once. */
function run(source: string) {
  const pointed = source.replaceAll(TENANT, sandbox.url).replaceAll(REDIRECT, redirectUri);
  return runProgram({
    dir,
    name: "oauth4webapi",
    source: toJavaScript(pointed),
    env: { HOME: home },
    openAuthorizeUrl: approveInBrowser,
  });
}

const outcomes = () =>
  sandbox.sandbox.events().map((event) => [event.endpoint, event.grantType, event.outcome, event.detail]);

describe("the guide's oauth4webapi recipe", () => {
  it("is one TypeScript program with the customFetch adapter, and compiles", () => {
    expect(program).toContain(ADAPTER);
    expect(program).toContain(`"${TENANT}"`);
    expect(program).toContain(`"${REDIRECT}"`);
    expect(typecheckSnippet("another-oauth-library", "oauth4webapi", program!)).toBe("");
  });

  it("signs in, refreshes with a rotated refresh token and revokes against the sandbox", async () => {
    const result = await run(program!);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.openedAuthorizeUrl).toBe(true);
    expect(result.stdout).toContain("refresh token rotated");
    expect(result.stdout).toContain("revoked");
    expect(outcomes()).toEqual([
      ["token", "authorization_code", "ok", null],
      ["token", "refresh_token", "ok", null],
      ["revoke", null, "ok", "family_revoked"],
    ]);
  });

  it("is refused without the adapter: the token endpoint takes JSON only", async () => {
    const result = await run(program!.replace(ADAPTER, ""));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("Content-Type must be application/json");
    expect(outcomes()).toEqual([["token", null, "invalid_request", "malformed_request"]]);
  });
});
