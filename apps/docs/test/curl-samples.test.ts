// The samples of the reference run against a real sandbox, as a reader would run them (issue 27):
// every curl sample (samples/<operationId>.sh) with bash and curl, chained the way the reader
// chains them (authorize, exchange the code with the sample's own verifier, refresh, read the user,
// revoke); and the "get user" samples in TypeScript and Python, which must sign in before the call
// instead of failing with NOT_SIGNED_IN. The samples name the contract's server (acme.tenant.test);
// the test puts the sandbox's URL there, and a free port where they name the loopback redirect.
import { execFile, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "@tenant-integration/prism-testing";
import { approveInBrowser, programDirectory, runProgram, toJavaScript } from "@tenant-integration/readme-samples/run";
import { DEMO_USER, startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module of the build, without type declarations
import { samplesDir } from "../scripts/code-samples.mjs";
// @ts-expect-error -- a plain ES module of the tools, without type declarations
import { ensureVenv } from "../../../tools/python/venv.mjs";
import { contract } from "./support/contract.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = promisify(execFile);
const sample = (file: string): string => readFileSync(join(samplesDir, file), "utf8");
const server = (contract as unknown as { servers: { url: string; variables: Record<string, { default: string }> }[] })
  .servers[0]!;
/** The contract's one server with its default host: the host every sample must name. */
const CONTRACT_HOST = server.url.replace("{tenant_host}", server.variables["tenant_host"]!.default);
const CLIENT_ID = "demo-integration";
const REDIRECT = "http://127.0.0.1:53682/callback";

/** Runs a curl sample with bash, the placeholders replaced; rejects (with its output) on a non-zero exit. */
async function curlSample(source: string, values: Record<string, string> = {}): Promise<string> {
  let script = source.replaceAll(CONTRACT_HOST, sandbox.url);
  for (const [placeholder, value] of Object.entries(values)) script = script.replaceAll(placeholder, value);
  const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], { encoding: "utf8" });
  return stdout;
}

/** Runs authorize.sh (auto-approved by the sandbox): the code and state of the redirect, and the sample's own verifier. */
async function authorizeWithCurl(): Promise<{ code: string; state: string; verifier: string; stdout: string }> {
  const stdout = await curlSample(`${sample("authorize.sh")}\nprintf 'verifier=%s\\n' "$VERIFIER"\n`);
  const location = /^302 (\S+)$/m.exec(stdout)?.[1];
  expect(location, stdout).toBeDefined();
  const query = new URL(location!).searchParams;
  return {
    code: query.get("code")!,
    state: query.get("state")!,
    verifier: /^verifier=(\S+)$/m.exec(stdout)![1]!,
    stdout,
  };
}

/** The JSON objects a sample printed, one after the other. */
const jsonObjects = (stdout: string): Record<string, unknown>[] =>
  JSON.parse(
    `[${stdout
      .trim()
      .replace(/}\s*(\d{3}\s*)?{/g, "},{")
      .replace(/\s*\d{3}\s*$/, "")}]`,
  ) as Record<string, unknown>[];

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, autoApprove: true, clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT] }] });
});
afterAll(async () => {
  await sandbox?.close();
});

describe("the samples of the reference", () => {
  it("name the contract's server, not another placeholder host", () => {
    expect(CONTRACT_HOST).toBe("https://acme.tenant.test");
    for (const extension of ["ts", "py", "sh"]) {
      for (const operationId of ["authorize", "exchangeToken", "getAuthenticatedUser", "revokeToken"]) {
        const source = sample(`${operationId}.${extension}`);
        const hosts = [...source.matchAll(/https?:\/\/[^/"\s:]+(?::\d+)?/g)]
          .map(([url]) => url)
          .filter((url) => !url.startsWith("http://127.0.0.1"));
        expect(new Set(hosts), `${operationId}.${extension}`).toEqual(new Set([CONTRACT_HOST]));
      }
    }
  });
});

describe("the curl samples, against the sandbox", () => {
  it("authorize.sh: makes a PKCE S256 request that comes back to the redirect URI with a code and the state", async () => {
    const { code, state, stdout } = await authorizeWithCurl();
    expect(stdout).toMatch(/^open: .*\/oauth\/authorize\?response_type=code&client_id=demo-integration&/m);
    expect(code).toMatch(/\S{10,}/);
    expect(stdout).toContain(`state=${state}`);
  });

  it("exchangeToken.sh: exchanges the code with the verifier of authorize.sh, then refreshes with the refresh_token grant", async () => {
    const signIn = await authorizeWithCurl();
    // The refresh token of another sign-in, as the reader's from an earlier exchange.
    const earlier = await authorizeWithCurl();
    const [issued] = jsonObjects(
      await curlSample(sample("exchangeToken.sh").split("# grant_type=refresh_token")[0]!, {
        "<CODE>": earlier.code,
        "<CODE_VERIFIER>": earlier.verifier,
      }),
    );
    const stdout = await curlSample(sample("exchangeToken.sh"), {
      "<CODE>": signIn.code,
      "<CODE_VERIFIER>": signIn.verifier,
      "<REFRESH_TOKEN>": String(issued!["refresh_token"]),
    });
    const [exchanged, refreshed] = jsonObjects(stdout);
    expect(exchanged).toMatchObject({ token_type: "Bearer", expires_in: 900 });
    expect(Object.keys(exchanged!)).toEqual(expect.arrayContaining(["access_token", "refresh_token"]));
    expect(refreshed).toMatchObject({ token_type: "Bearer" });
    expect(refreshed!["access_token"]).not.toBe(issued!["access_token"]);
  });

  it("exchangeToken.sh without its JSON Content-Type fails: the check would catch a broken sample", async () => {
    const { code, verifier } = await authorizeWithCurl();
    const broken = sample("exchangeToken.sh").replaceAll(
      '-H "Content-Type: application/json"',
      '-H "Content-Type: text/plain"',
    );
    await expect(
      curlSample(broken, { "<CODE>": code, "<CODE_VERIFIER>": verifier, "<REFRESH_TOKEN>": "x" }),
    ).rejects.toMatchObject({ code: 22 });
  });

  it("getAuthenticatedUser.sh and revokeToken.sh: read the user with the access token, revoke it, and the token no longer reads", async () => {
    const { code, verifier } = await authorizeWithCurl();
    const [tokens] = jsonObjects(
      await curlSample(sample("exchangeToken.sh").split("# grant_type=refresh_token")[0]!, {
        "<CODE>": code,
        "<CODE_VERIFIER>": verifier,
      }),
    );
    const accessToken = String(tokens!["access_token"]);
    const user = JSON.parse(
      await curlSample(sample("getAuthenticatedUser.sh"), { "<ACCESS_TOKEN>": accessToken }),
    ) as Record<string, unknown>;
    expect(user["name"]).toBe(DEMO_USER["name"]);
    expect((await curlSample(sample("revokeToken.sh"), { "<ACCESS_TOKEN>": accessToken })).trim()).toBe("200");
    await expect(
      curlSample(sample("getAuthenticatedUser.sh"), { "<ACCESS_TOKEN>": accessToken }),
    ).rejects.toMatchObject({ code: 22 });
  });
});

describe("the get-user samples sign in first, against the sandbox", () => {
  it("getAuthenticatedUser.ts: signs in through the loopback redirect, then prints the user (no NOT_SIGNED_IN)", async () => {
    const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
    const own = await startSandbox({
      port: 0,
      autoApprove: true,
      clients: [{ id: CLIENT_ID, redirectUris: [redirectUri] }],
    });
    const dir = programDirectory(docsDir, "get-user-sample-");
    try {
      const source = toJavaScript(
        sample("getAuthenticatedUser.ts").replaceAll(CONTRACT_HOST, own.url).replaceAll(REDIRECT, redirectUri),
      );
      const result = await runProgram({ dir, name: "get-user", source, openAuthorizeUrl: approveInBrowser });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.openedAuthorizeUrl).toBe(true);
      expect(result.stdout).toContain(String(DEMO_USER["name"]));
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("getAuthenticatedUser.py: signs in with the pasted callback URL, then prints the user (no NOT_SIGNED_IN)", async () => {
    const python = (await ensureVenv({ quiet: true })) as string;
    const child = spawn(python, ["-c", sample("getAuthenticatedUser.py").replaceAll(CONTRACT_HOST, sandbox.url)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let answered = false;
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const url = /https?:\/\/\S+\/oauth\/authorize\?\S+/.exec(stdout)?.[0];
      if (url && !answered) {
        answered = true;
        // The person's browser: the tenant approves at once and sends it to the redirect URI,
        // where nothing listens; the person pastes that URL.
        void fetch(url, { redirect: "manual" }).then((response) =>
          child.stdin.end(`${response.headers.get("location")}\n`),
        );
      }
    });
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(answered).toBe(true);
    expect(stdout).toContain(String(DEMO_USER["name"]));
  });
});
