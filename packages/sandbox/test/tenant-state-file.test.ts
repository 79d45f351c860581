import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startSandbox, StateFileError, type RunningSandbox } from "../src/index.js";
import { readStateFile, STATE_WRITE_DELAY_MS, StateFileWriter } from "../src/tenant-state-file.js";
import { SNAPSHOT_VERSION } from "../src/snapshot.js";
import { CLIENT_ID, pkce, REDIRECT_URI, type TokenBody } from "./helpers.js";

const CLI = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const clients = [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }];

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sandbox-state-"));
  dirs.push(dir);
  return dir;
}

/** The whole flow over HTTP against a running sandbox with auto-approve. */
async function signInOver(url: string): Promise<TokenBody> {
  const { verifier, challenge } = pkce();
  const query = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    state: "s",
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const authorize = await fetch(`${url}/oauth/authorize?${query.toString()}`, { redirect: "manual" });
  const code = new URL(authorize.headers.get("location") ?? "").searchParams.get("code");
  return (await (
    await postToken(url, {
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    })
  ).json()) as TokenBody;
}

function postToken(url: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function refreshOver(url: string, refreshToken: string): Promise<Response> {
  return postToken(url, { grant_type: "refresh_token", client_id: CLIENT_ID, refresh_token: refreshToken });
}

function userOver(url: string, accessToken: string): Promise<Response> {
  return fetch(`${url}/api/v1/auth/user`, { headers: { authorization: `Bearer ${accessToken}` } });
}

async function withSandbox<T>(
  options: Parameters<typeof startSandbox>[0],
  use: (running: RunningSandbox) => Promise<T>,
): Promise<T> {
  const running = await startSandbox(options);
  try {
    return await use(running);
  } finally {
    await running.close();
  }
}

describe("--state-file: a tenant that survives a restart", () => {
  it("keeps the sign-in: after a restart the refresh and the user call work, and reuse detection still holds", async () => {
    const stateFile = join(await stateDir(), "state.json");
    const options = { autoApprove: true, clients, stateFile };
    const { first, second } = await withSandbox(options, async ({ url }) => {
      const first = await signInOver(url);
      const second = (await (await refreshOver(url, first.refresh_token)).json()) as TokenBody;
      return { first, second };
    });

    await withSandbox(options, async ({ url }) => {
      expect((await userOver(url, second.access_token)).status).toBe(200);
      const third = await refreshOver(url, second.refresh_token);
      expect(third.status).toBe(200);
      const { access_token } = (await third.json()) as TokenBody;
      expect((await userOver(url, access_token)).status).toBe(200);
      // The token rotated away before the restart is still known as rotated: the family is revoked.
      expect(await (await refreshOver(url, first.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
      expect((await userOver(url, access_token)).status).toBe(401);
    });
  });

  it("keeps the test clock, clients registered at run time and code replay detection", async () => {
    const stateFile = join(await stateDir(), "state.json");
    const code = await withSandbox(
      { autoApprove: true, testClock: true, clients, stateFile },
      async ({ url, sandbox }) => {
        sandbox.clients.register({ id: "late", redirectUris: ["http://127.0.0.1:9/cb"] });
        sandbox.clock.advance(3600);
        const { verifier, challenge } = pkce();
        const query = new URLSearchParams({
          response_type: "code",
          client_id: CLIENT_ID,
          redirect_uri: REDIRECT_URI,
          state: "s",
          code_challenge: challenge,
          code_challenge_method: "S256",
        });
        const location =
          (await fetch(`${url}/oauth/authorize?${query.toString()}`, { redirect: "manual" })).headers.get("location") ??
          "";
        const code = new URL(location).searchParams.get("code");
        const tokens = (await (
          await postToken(url, {
            grant_type: "authorization_code",
            client_id: CLIENT_ID,
            redirect_uri: REDIRECT_URI,
            code,
            code_verifier: verifier,
          })
        ).json()) as TokenBody;
        return { code, verifier, tokens };
      },
    );
    await withSandbox({ testClock: true, clients, stateFile }, async ({ url, sandbox }) => {
      expect(sandbox.clock.offsetSeconds).toBe(3600);
      expect(sandbox.clients.get("late")).toBeDefined();
      const replay = await postToken(url, {
        grant_type: "authorization_code",
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        code: code.code,
        code_verifier: code.verifier,
      });
      expect(replay.status).toBe(400);
      expect((await userOver(url, code.tokens.access_token)).status).toBe(401);
    });
  });

  it("keeps what the rotation grace needs across a restart", async () => {
    const stateFile = join(await stateDir(), "state.json");
    const options = { autoApprove: true, clients, stateFile, rotationGraceSeconds: 60 };
    const { first, second } = await withSandbox(options, async ({ url }) => {
      const first = await signInOver(url);
      const second = (await (await refreshOver(url, first.refresh_token)).json()) as TokenBody;
      return { first, second };
    });
    await withSandbox(options, async ({ url }) => {
      const again = (await (await refreshOver(url, first.refresh_token)).json()) as TokenBody;
      expect(again.refresh_token).toBe(second.refresh_token);
    });
  });

  it("writes the file with mode 0600, atomically, leaving no temporary file", async () => {
    const dir = await stateDir();
    const stateFile = join(dir, "state.json");
    await withSandbox({ autoApprove: true, clients, stateFile }, async ({ url }) => {
      for (let index = 0; index < 20; index += 1) await signInOver(url);
    });
    expect((await stat(stateFile)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(["state.json"]);
    const saved = await readStateFile(stateFile);
    expect(saved?.tokens.families).toHaveLength(20);
  });

  it("saves a change made just before close()", async () => {
    const stateFile = join(await stateDir(), "state.json");
    await withSandbox({ clients, stateFile }, async ({ sandbox }) => {
      sandbox.issueTokens(CLIENT_ID);
    });
    expect((await readStateFile(stateFile))?.tokens.families).toHaveLength(1);
  });

  it("coalesces a burst of changes into a few writes", async () => {
    const stateFile = join(await stateDir(), "state.json");
    let writes = 0;
    const writer = new StateFileWriter(
      stateFile,
      () => {
        writes += 1;
        return {
          format: "tenant-sandbox-state",
          version: SNAPSHOT_VERSION,
          clockOffsetSeconds: 0,
          clients: [],
          codes: [],
          tokens: { families: [], accessTokens: [], refreshTokens: [] },
        };
      },
      (error) => {
        throw error;
      },
    );
    for (let change = 0; change < 500; change += 1) writer.schedule();
    await new Promise((resolve) => setTimeout(resolve, STATE_WRITE_DELAY_MS * 3));
    // One write for the whole burst, never one per change, and nothing left for close() to write.
    expect(writes).toBe(1);
    await writer.close();
    expect(writes).toBe(1);
    expect(await readStateFile(stateFile)).toMatchObject({ format: "tenant-sandbox-state" });
  });
});

describe("a state file that cannot be used", () => {
  it.each([
    ["not JSON", "{ this is not json"],
    ["JSON of another shape", JSON.stringify({ hello: "world" })],
    ["a newer version", JSON.stringify({ format: "tenant-sandbox-state", version: 99 })],
    [
      "a token without its family",
      JSON.stringify({
        format: "tenant-sandbox-state",
        version: 1,
        clockOffsetSeconds: 0,
        clients: [],
        codes: [],
        tokens: { families: [], accessTokens: [{ token: "at_x" }], refreshTokens: [] },
      }),
    ],
  ])("refuses to start on %s, names the file, and leaves it unchanged", async (_name, content) => {
    const stateFile = join(await stateDir(), "state.json");
    await writeFile(stateFile, content);
    const before = await stat(stateFile);
    const error = await startSandbox({ clients, stateFile }).then(
      (running) => running.close().then(() => undefined),
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(StateFileError);
    expect(error).toMatchObject({ code: "state_file_corrupt", path: stateFile });
    expect((error as Error).message).toContain(stateFile);
    expect(await readFile(stateFile, "utf8")).toBe(content);
    expect((await stat(stateFile)).mtimeMs).toBe(before.mtimeMs);
  });

  it("refuses to start when the file cannot be read", async () => {
    const stateFile = join(await stateDir(), "state.json");
    await mkdir(stateFile); // a directory where the file should be
    await expect(startSandbox({ clients, stateFile })).rejects.toMatchObject({
      name: "StateFileError",
      code: "state_file_unreadable",
      path: stateFile,
    });
  });

  it("refuses to start when the file cannot be written, before listening", async () => {
    const stateFile = join(await stateDir(), "missing-directory", "state.json");
    await expect(startSandbox({ clients, stateFile })).rejects.toMatchObject({
      name: "StateFileError",
      code: "state_file_write_failed",
      path: stateFile,
    });
  });
});

describe("tenant-sandbox --state-file", () => {
  function startCli(
    args: string[],
  ): Promise<{ url: string; stop: (signal?: NodeJS.Signals) => Promise<number | null> }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        const line = stdout.split("\n").find((candidate) => candidate.startsWith("{"));
        if (line !== undefined && stdout.includes("\n")) {
          const exited = new Promise<number | null>((done) => child.once("exit", done));
          resolve({
            url: (JSON.parse(line) as { url: string }).url,
            stop: (signal = "SIGTERM") => (child.kill(signal), exited),
          });
        }
      });
      child.once("exit", (code) => reject(new Error(`exited ${String(code)}: ${stderr}`)));
    });
  }

  it("keeps a sign-in across a SIGTERM and a restart of the command", async () => {
    const stateFile = join(await stateDir(), "state.json");
    const args = [
      "--port",
      "0",
      "--json",
      "--auto-approve",
      "--state-file",
      stateFile,
      "--client",
      `id=${CLIENT_ID},redirect=${REDIRECT_URI}`,
    ];
    const first = await startCli(args);
    const tokens = await signInOver(first.url);
    expect(await first.stop()).toBe(0);
    const second = await startCli(args);
    try {
      const refreshed = await refreshOver(second.url, tokens.refresh_token);
      expect(refreshed.status).toBe(200);
      expect((await userOver(second.url, ((await refreshed.json()) as TokenBody).access_token)).status).toBe(200);
    } finally {
      await second.stop();
    }
  });

  it("survives kill -9 in the middle of sign-ins: the file is whole, and a sign-in older than the write delay is kept", async () => {
    const stateFile = join(await stateDir(), "state.json");
    const args = [
      "--port",
      "0",
      "--json",
      "--auto-approve",
      "--state-file",
      stateFile,
      "--client",
      `id=${CLIENT_ID},redirect=${REDIRECT_URI}`,
    ];
    const first = await startCli(args);
    const early = await signInOver(first.url);
    await new Promise((resolve) => setTimeout(resolve, STATE_WRITE_DELAY_MS * 10)); // generous: the machine may be busy
    // Sign-ins in flight, so that writes are under way when the process dies.
    const load = Promise.allSettled(Array.from({ length: 40 }, () => signInOver(first.url)));
    await new Promise((resolve) => setTimeout(resolve, STATE_WRITE_DELAY_MS * 2));
    await first.stop("SIGKILL");
    await load;
    const second = await startCli(args);
    try {
      expect((await refreshOver(second.url, early.refresh_token)).status).toBe(200);
    } finally {
      await second.stop();
    }
  });

  it("exits 1 naming a corrupt state file, and leaves it unchanged", async () => {
    const stateFile = join(await stateDir(), "state.json");
    await writeFile(stateFile, "not json");
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, "--port", "0", "--state-file", stateFile], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("exit", (code) => resolve({ code, stderr }));
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(stateFile);
    expect(await readFile(stateFile, "utf8")).toBe("not json");
  });
});
