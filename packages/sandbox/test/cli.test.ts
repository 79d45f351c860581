import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "../src/args.js";

const CLI = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGTERM");
});

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts the CLI and resolves with the process and its first stdout line once it is listening. */
function start(args: string[]): Promise<{ child: ChildProcess; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (/auto-approve: |\}\n/.test(stdout)) resolve({ child, output: () => stdout });
    });
    child.on("exit", (code) => reject(new Error(`exited ${String(code)}: ${stderr}`)));
  });
}

describe("parseCommand", () => {
  it("reads repeated --client with several redirect URIs and a scope allow-list", () => {
    const command = parseCommand([
      "--port",
      "0",
      "--client",
      "id=a,redirect=http://127.0.0.1:1/cb|http://localhost:1/cb,redirect=myapp:/cb,scopes=profile:read|tickets:read",
      "--client",
      "id=b,redirect=https://b.example/cb",
      "--auto-approve",
      "--test-clock",
    ]);
    expect(command).toEqual({
      kind: "run",
      port: 0,
      json: false,
      autoApprove: true,
      testClock: true,
      clients: [
        {
          id: "a",
          redirectUris: ["http://127.0.0.1:1/cb", "http://localhost:1/cb", "myapp:/cb"],
          scopes: ["profile:read", "tickets:read"],
        },
        { id: "b", redirectUris: ["https://b.example/cb"] },
      ],
    });
  });

  it("reads --users", () => {
    expect(parseCommand(["--users", "200"])).toMatchObject({ kind: "run", users: 200 });
  });

  it("reads --state-file, --rotation-grace and repeated --allowed-host", () => {
    const command = parseCommand([
      "--state-file",
      "state.json",
      "--rotation-grace",
      "30",
      "--allowed-host",
      "Tenant.Test",
      "--allowed-host",
      "::1",
    ]);
    expect(command).toMatchObject({
      kind: "run",
      stateFile: "state.json",
      rotationGraceSeconds: 30,
      allowedHosts: ["tenant.test", "[::1]"],
    });
  });

  it.each([
    [["--port", "65536"], /--port/],
    [["--rotation-grace", "3601"], /--rotation-grace/],
    [["--rotation-grace", "1.5"], /--rotation-grace/],
    [["--rotation-grace", "-1"], /--rotation-grace|argument/],
    [["--state-file", ""], /--state-file/],
    [["--allowed-host", "tenant.test:4020"], /--allowed-host/],
    [["--port", "abc"], /--port/],
    [["--users", "0"], /--users must be a whole number from 1 to 10000, not "0"/],
    [["--users", "10001"], /--users/],
    [["--users", "three"], /--users/],
    [["--port"], /argument missing/],
    [["--nope"], /Unknown option/],
    [["stray"], /positional/],
    [["--client", "redirect=http://x/cb"], /no id/],
    [["--client", "id=a"], /at least one redirect URI/],
    [["--client", "id=a,redirect=not a uri"], /not an absolute URI/],
    [["--client", "id=a,redirect=http://x/cb#frag"], /fragment/],
    [["--client", "id=a,redirect=http://x/cb,scopes=admin"], /unknown scope/],
    [["--client", "id=a,redirect=http://x/cb,colour=red"], /unknown key/],
    [["--client", "id=a,redirect=http://x/cb", "--client", "id=a,redirect=http://y/cb"], /given twice/],
  ])("refuses %j", (args, message) => {
    expect(() => parseCommand(args)).toThrow(UsageError);
    expect(() => parseCommand(args)).toThrow(message);
  });
});

describe("tenant-sandbox", () => {
  it("--help prints every flag and exits 0", async () => {
    const result = await run(["--help"]);
    expect(result.code).toBe(0);
    for (const flag of [
      "--port",
      "--host",
      "--client",
      "--config",
      "--auto-approve",
      "--test-clock",
      "--state-file",
      "--rotation-grace",
      "--allowed-host",
      "--users",
      "--json",
      "--help",
      "--version",
    ]) {
      expect(result.stdout).toContain(flag);
    }
  });

  it("exits 2 with a clear message on a bad argument", async () => {
    const result = await run(["--port", "-3"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^tenant-sandbox: [\s\S]*\nRun tenant-sandbox --help/);
  });

  it("exits 2 on a config file whose users cannot sign in", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sandbox-cli-"));
    const path = join(dir, "sandbox.json");
    await writeFile(path, JSON.stringify({ users: [{ id: 1 }, { id: "1" }] }));
    const result = await run(["--config", path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("users[1]: the id 1 is given twice");
  });

  it("--users names the users at start, and the sandbox approves as the one a request names", async () => {
    const { output } = await start([
      "--port",
      "0",
      "--auto-approve",
      "--test-clock",
      "--users",
      "5",
      "--client",
      "id=demo,redirect=http://localhost:5173/callback",
    ]);
    expect(output()).toContain(
      "users: 42 Ada Lovelace, 43 Grace Hopper, 44 Émilie du Châtelet, … (5 in all) (the first is the default)",
    );
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1] ?? "";
    const { users } = (await (await fetch(`${url}/__sandbox/users`)).json()) as { users: { id: number }[] };
    expect(users.map((user) => user.id)).toEqual([42, 43, 44, 45, 46]);
  });

  it("exits 2 on a config file with an unknown field", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sandbox-cli-"));
    const path = join(dir, "sandbox.json");
    await writeFile(path, JSON.stringify({ clients: [], colour: "red" }));
    const result = await run(["--config", path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown config field "colour"');
  });

  it("--port 0 picks a free port, prints the URL and the clients, and serves", async () => {
    const { child, output } = await start([
      "--port",
      "0",
      "--auto-approve",
      "--client",
      "id=demo,redirect=http://localhost:5173/callback",
    ]);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1];
    expect(url).toBeDefined();
    expect(output()).toContain("demo");
    expect(output()).toContain("http://localhost:5173/callback");
    const health = await fetch(`${url ?? ""}/__sandbox/health`);
    expect(health.status).toBe(200);
    expect((await fetch(`${url ?? ""}/__sandbox/clock`)).status).toBe(404);
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("registers a native client from --client ...,native whose loopback redirect URI accepts any port", async () => {
    const { output } = await start([
      "--port",
      "0",
      "--auto-approve",
      "--client",
      "id=cli,redirect=http://127.0.0.1/callback,native",
    ]);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1] ?? "";
    expect(output()).toContain("native: loopback redirect URIs without a port accept any port");
    const query = new URLSearchParams({
      response_type: "code",
      client_id: "cli",
      redirect_uri: "http://127.0.0.1:50123/callback",
      scope: "profile:read",
      state: "s",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    });
    const response = await fetch(`${url}/oauth/authorize?${query.toString()}`, { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toMatch(/^http:\/\/127\.0\.0\.1:50123\/callback\?code=/);
  });

  it("reads clients, test clock and users from --config and prints JSON with --json", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sandbox-cli-"));
    const path = join(dir, "sandbox.json");
    await writeFile(
      path,
      JSON.stringify({
        port: 0,
        testClock: true,
        clients: [{ id: "cfg", redirectUris: ["http://127.0.0.1:9/cb"], scopes: ["profile:read"] }],
        users: [{ id: "u-9" }],
      }),
    );
    const { output } = await start(["--config", path, "--json"]);
    const info = JSON.parse(output().split("\n")[0] ?? "") as {
      url: string;
      clients: Array<{ id: string }>;
      testClock: boolean;
    };
    expect(info.clients.map((client) => client.id)).toEqual(["cfg"]);
    expect(info.testClock).toBe(true);
    expect((await fetch(`${info.url}/__sandbox/clock`)).status).toBe(200);
  });
});
