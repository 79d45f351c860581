// `pnpm start` as a newcomer runs it (after the build): it prints the URLs, each answers, a
// person can sign in through the example by clicking through the sandbox's consent page, and
// Ctrl-C stops everything it started.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "@tenant-integration/browser-testing";

const script = join(dirname(fileURLToPath(import.meta.url)), "..", "start.mjs");
const exampleCli = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "apps",
  "example-cli",
  "dist",
  "cli.js",
);
let child: ChildProcess;
let output = "";
const urls: Record<string, string> = {};

beforeAll(async () => {
  // Port 0 everywhere: the test never collides with a developer's running `pnpm start`.
  child = spawn(process.execPath, [script], {
    env: {
      ...process.env,
      DOCS_PORT: "0",
      SANDBOX_PORT: "0",
      WEB_PORT: "0",
      GO_SERVER_PORT: "0",
      TS_SERVER_PORT: "0",
      PYTHON_SERVER_PORT: "0",
      JAVA_SERVER_PORT: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pnpm start printed no URLs:\n${output}`)), 45_000);
    const check = () => {
      if (!/Press Ctrl-C to stop\.\s*$/.test(output)) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => reject(new Error(`pnpm start exited (${code}):\n${output}`)));
  });
  for (const [key, pattern] of Object.entries({
    docs: /✔ Docs[^:]*: (\S+)/,
    sandbox: /✔ Sandbox tenant: (\S+)/,
    web: /✔ Example web app[^:]*: (\S+)/,
    goServer: /✔ Example Go server[^:]*: (\S+)/,
    tsServer: /✔ Example TypeScript server[^:]*: (\S+)/,
    pythonServer: /✔ Example Python server[^:]*: (\S+)/,
    javaServer: /✔ Example Java server[^:]*: (\S+)/,
  })) {
    const match = pattern.exec(output);
    if (match) urls[key] = match[1]!;
  }
}, 60_000);

afterAll(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
});

describe("pnpm start", () => {
  it("prints the docs, sandbox and examples' URLs, and each answers", async () => {
    expect(Object.keys(urls).sort(), output).toEqual([
      "docs",
      "goServer",
      "javaServer",
      "pythonServer",
      "sandbox",
      "tsServer",
      "web",
    ]);
    expect((await fetch(urls.docs!)).status).toBe(200);
    expect(await (await fetch(`${urls.sandbox}/__sandbox/health`)).json()).toEqual({ status: "ok" });
    expect(await (await fetch(urls.web!)).text()).toContain(urls.sandbox);
    expect(await (await fetch(urls.goServer!)).text()).toContain("Example Go server");
    expect(await (await fetch(urls.tsServer!)).text()).toContain("Example TypeScript server");
    expect(await (await fetch(urls.pythonServer!)).text()).toContain("Example Python server");
    expect(await (await fetch(urls.javaServer!)).text()).toContain("Example Java server");
  });

  it("runs each example server on a port of its own, its callback registered at the sandbox, and prints no warning", () => {
    const ports = [urls.goServer, urls.tsServer, urls.pythonServer, urls.javaServer].map((url) => new URL(url!).port);
    expect(new Set(ports).size).toBe(4);
    for (const port of ports) expect(output).toContain(`http://127.0.0.1:${port}/callback`);
    expect(output).not.toMatch(/warn|✖|^- /im);
  });

  it("lets a person sign in through the example by clicking", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(urls.web!);
      await page.getByTestId("sign-in").click();
      await page.getByRole("button", { name: /approve/i }).click();
      await expect.poll(() => page.getByTestId("user-name").textContent(), { timeout: 20_000 }).toBe("Ada Lovelace");
    } finally {
      await browser.close();
    }
  });

  it("registers the example CLI's default client at the CLI's default redirect URI", async () => {
    // The defaults as the CLI's own --help states them, so a newcomer's `tenant login` needs no flag.
    const help = execFileSync(process.execPath, [exampleCli, "--help"], { encoding: "utf8" });
    const clientId = /--client-id ID .*else (\S+)\)/.exec(help)?.[1];
    const port = /--port N .*else (\d+)\)/.exec(help)?.[1];
    expect([clientId, port], help).not.toContain(undefined);
    const authorize = new URL("/oauth/authorize", urls.sandbox);
    for (const [name, value] of Object.entries({
      response_type: "code",
      client_id: clientId!,
      redirect_uri: `http://127.0.0.1:${port}/callback`,
      scope: "profile:read",
      state: "s".repeat(32),
      code_challenge: "c".repeat(43),
      code_challenge_method: "S256",
    }))
      authorize.searchParams.set(name, value);
    const answer = await fetch(authorize, { redirect: "manual" });
    expect(answer.status, await answer.text()).toBe(200); // the consent page, not a refusal of the client
  });

  it("stops everything on Ctrl-C", async () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    await expect(fetch(`${urls.sandbox}/__sandbox/health`)).rejects.toThrow();
    await expect(fetch(urls.web!)).rejects.toThrow();
    await expect(fetch(urls.goServer!)).rejects.toThrow();
    await expect(fetch(urls.tsServer!)).rejects.toThrow();
    await expect(fetch(urls.pythonServer!)).rejects.toThrow();
    await expect(fetch(urls.javaServer!)).rejects.toThrow();
  });
});
