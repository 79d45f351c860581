// The curl samples of the reference (samples/<operationId>.sh) run with bash and curl against the
// sandbox `pnpm start` serves (test/support/samples.ts), chained as a reader chains them in one
// shell: authorize prints the URL, the person approves on the consent page and reads the code from
// the address bar, the code is exchanged with the verifier authorize.sh made, the refresh token
// refreshes, the access token reads the user and is revoked. The effect of each step is read from
// the tenant's event log. The samples name `pnpm start`'s ports; the test puts the started
// sandbox's there (`atSandbox`), and the reader's placeholders (`<CODE>`, `<ACCESS_TOKEN>`, …).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { DEMO_USER } from "@tenant-integration/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  approveOnConsentPage,
  atSandbox,
  SAMPLE_CLIENT,
  sampleSource,
  startLikePnpmStart,
  type SandboxEvent,
  type StartedSandbox,
} from "./support/samples.js";

const run = promisify(execFile);

let sandbox: StartedSandbox;
let seen = 0;

beforeAll(async () => {
  sandbox = await startLikePnpmStart();
});
afterAll(async () => {
  await sandbox?.close();
});

/** The events since the last call, as `endpoint grant client status outcome`. */
async function newEvents(): Promise<string[]> {
  const events = (await sandbox.events()).slice(seen);
  seen += events.length;
  return events.map(
    ({ endpoint, grantType, clientId, status, outcome }: SandboxEvent) =>
      `${endpoint} ${grantType ?? "-"} ${clientId} ${status} ${outcome}`,
  );
}

/** Runs a curl sample with bash (`-euo pipefail`), the placeholders replaced and `env` set, as in the reader's shell. */
async function curlSample(source: string, values: Record<string, string> = {}, env: Record<string, string> = {}) {
  let script = atSandbox(source, sandbox);
  for (const [placeholder, value] of Object.entries(values)) script = script.replaceAll(placeholder, value);
  const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  return stdout;
}

/**
 * authorize.sh, then the person: opens the URL it printed, approves, and reads `code` and `state`
 * from where the browser went; `verifier` is the shell's $VERIFIER, which exchangeToken.sh uses.
 */
async function authorizeWithCurl(): Promise<{ code: string; verifier: string; stdout: string }> {
  const stdout = await curlSample(`${sampleSource("authorize.sh")}\nprintf 'verifier=%s\\n' "$VERIFIER"\n`);
  const url = /^Open this URL to sign in:\n(\S+)$/m.exec(stdout)?.[1];
  expect(url, stdout).toBeDefined();
  const redirect = new URL(await approveOnConsentPage(url!));
  const state = /^Then compare the returned state with: (\S+)$/m.exec(stdout)?.[1];
  expect(redirect.searchParams.get("state")).toBe(state);
  return { code: redirect.searchParams.get("code")!, verifier: /^verifier=(\S+)$/m.exec(stdout)![1]!, stdout };
}

/** The JSON objects a sample printed, one after the other. */
const jsonObjects = (stdout: string): Record<string, unknown>[] =>
  JSON.parse(
    `[${stdout
      .trim()
      .replace(/}\s*(\d{3}\s*)?{/g, "},{")
      .replace(/\s*\d{3}\s*$/, "")}]`,
  ) as Record<string, unknown>[];

const exchangeOnly = (): string => sampleSource("exchangeToken.sh").split("# grant_type=refresh_token")[0]!;

describe("the curl samples, against pnpm start's sandbox", () => {
  it("authorize.sh: prints a PKCE S256 request that, approved, comes back with a code and the state it printed", async () => {
    seen = (await sandbox.events()).length;
    const { code, stdout } = await authorizeWithCurl();
    expect(stdout).toMatch(/\/oauth\/authorize\?response_type=code&client_id=demo-cli&/);
    expect(stdout).toMatch(/&code_challenge_method=S256$/m);
    expect(code).toMatch(/\S{10,}/);
    expect(await newEvents()).toEqual([]); // nothing exchanged yet
  });

  it("exchangeToken.sh: exchanges the code with authorize.sh's verifier, then refreshes with a refresh token", async () => {
    // The refresh token of an earlier sign-in, as the reader's from an earlier exchange.
    const earlier = await authorizeWithCurl();
    const [issued] = jsonObjects(
      await curlSample(exchangeOnly(), { "<CODE>": earlier.code }, { VERIFIER: earlier.verifier }),
    );
    seen = (await sandbox.events()).length;
    const signIn = await authorizeWithCurl();
    const stdout = await curlSample(
      sampleSource("exchangeToken.sh"),
      { "<CODE>": signIn.code, "<REFRESH_TOKEN>": String(issued!["refresh_token"]) },
      { VERIFIER: signIn.verifier },
    );
    const [exchanged, refreshed] = jsonObjects(stdout);
    expect(exchanged).toMatchObject({ token_type: "Bearer", expires_in: 900 });
    expect(Object.keys(exchanged!)).toEqual(expect.arrayContaining(["access_token", "refresh_token"]));
    expect(refreshed).toMatchObject({ token_type: "Bearer" });
    expect(refreshed!["refresh_token"]).not.toBe(issued!["refresh_token"]);
    expect(await newEvents()).toEqual([
      `token authorization_code ${SAMPLE_CLIENT} 200 ok`,
      `token refresh_token ${SAMPLE_CLIENT} 200 ok`,
    ]);
  });

  it("exchangeToken.sh without its JSON Content-Type fails: the check would catch a broken sample", async () => {
    const { code, verifier } = await authorizeWithCurl();
    const broken = exchangeOnly().replaceAll('-H "Content-Type: application/json"', '-H "Content-Type: text/plain"');
    await expect(curlSample(broken, { "<CODE>": code }, { VERIFIER: verifier })).rejects.toMatchObject({ code: 22 });
  });

  it("getAuthenticatedUser.sh and revokeToken.sh: read the user, revoke the token, and the token no longer reads", async () => {
    const { code, verifier } = await authorizeWithCurl();
    const [tokens] = jsonObjects(await curlSample(exchangeOnly(), { "<CODE>": code }, { VERIFIER: verifier }));
    const accessToken = String(tokens!["access_token"]);
    const user = JSON.parse(
      await curlSample(sampleSource("getAuthenticatedUser.sh"), { "<ACCESS_TOKEN>": accessToken }),
    );
    expect(user["name"]).toBe(DEMO_USER["name"]);
    seen = (await sandbox.events()).length;
    const revoked = await curlSample(sampleSource("revokeToken.sh"), { "<ACCESS_TOKEN>": accessToken });
    expect(revoked.trim()).toBe("200");
    expect(await newEvents()).toEqual([`revoke - ${SAMPLE_CLIENT} 200 ok`]);
    await expect(
      curlSample(sampleSource("getAuthenticatedUser.sh"), { "<ACCESS_TOKEN>": accessToken }),
    ).rejects.toMatchObject({ code: 22 });
  });
});
