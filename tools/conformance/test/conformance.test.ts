// The conformance suite on every runtime found on this machine: PKCE vectors and the end-to-end
// flow against one sandbox. In CI every runtime must be present (.ci/run installs them); locally a
// missing runtime is named and left out.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { EdgeRuntime } from "edge-runtime";
import { launchChromium } from "@tenant-integration/browser-testing";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { findRuntimes } from "@tenant-integration/runtimes";

const here = dirname(fileURLToPath(import.meta.url));
const CLIENT_ID = "conformance";
type Result = { name: string; ok: boolean; error?: string };

let sandbox: RunningSandbox;
let page: Server;
let origin: string;
let bundle: string;
let esmBundle: string;

/** The flow bundled by esbuild for the browser, the edge runtime (iife) and workerd (esm). */
async function bundleFlow(format: "iife" | "esm"): Promise<string> {
  const built = await build({
    entryPoints: [join(here, "..", "src", "entry-bundle.mjs")],
    bundle: true,
    format,
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return built.outputFiles[0]!.text;
}

beforeAll(async () => {
  bundle = await bundleFlow("iife");
  esmBundle = await bundleFlow("esm");
  // The browser's page: its origin is the registered redirect URI's, so CORS lets it call the tenant.
  page = createServer((req, res) => {
    if (req.url === "/conformance.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(bundle);
    } else {
      res
        .writeHead(200, { "content-type": "text/html" })
        .end('<!doctype html><title>conformance</title><script src="/conformance.js"></script>');
    }
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  const address = page.address();
  origin = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  sandbox = await startSandbox({
    port: 0,
    autoApprove: true,
    testClock: true,
    clients: [{ id: CLIENT_ID, redirectUris: [`${origin}/callback`] }],
  });
});

afterAll(async () => {
  await sandbox?.close();
  await new Promise((resolve) => page?.close(resolve));
});

const options = () => ({ baseUrl: sandbox.url, clientId: CLIENT_ID, redirectUri: `${origin}/callback` });

function expectAllPassed(runtime: string, results: Result[]) {
  const failed = results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`);
  expect(failed, `${runtime} failed`).toEqual([]);
  expect(results.length).toBeGreaterThanOrEqual(7);
}

const { found, missing } = findRuntimes();

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromiumPath)) missing.push({ name: "chromium", why: `${chromiumPath} does not exist` });

describe("the targets", () => {
  it("are all present in CI; locally, the missing ones are named", () => {
    for (const m of missing) console.warn(`conformance: ${m.name} left out: ${m.why}`);
    if (process.env.CI === "true") expect(missing).toEqual([]);
    expect(found.map((r) => r.name)).toContain("node20");
  });
});

const scriptRuntimes = found.filter((r) => r.name !== "workerd");
const workerd = found.find((r) => r.name === "workerd");

describe.each(scriptRuntimes)("on $name ($version)", (runtime) => {
  it("passes the PKCE vectors and the end-to-end flow", async () => {
    const script = join(here, "..", "src", "entry-cli.mjs");
    const child = spawn(runtime.command, runtime.run(script), {
      cwd: join(here, ".."),
      env: {
        ...process.env,
        CONFORMANCE_RUNTIME: runtime.name,
        CONFORMANCE_SANDBOX_URL: sandbox.url,
        CONFORMANCE_CLIENT_ID: CLIENT_ID,
        CONFORMANCE_REDIRECT_URI: `${origin}/callback`,
        NO_COLOR: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const line = out.split("\n").find((l) => l.startsWith("CONFORMANCE_RESULT "));
    expect(line, out).toBeDefined();
    expectAllPassed(runtime.name, JSON.parse(line!.slice("CONFORMANCE_RESULT ".length)));
    expect(code, out).toBe(0);
  }, 60_000);
});

// The sandbox is a Hono app on web APIs: the same app, served by Bun's and Deno's own servers,
// passes the flow driven from Node.
describe.each(scriptRuntimes.filter((r) => r.name === "bun" || r.name === "deno"))(
  "the sandbox app served by $name",
  (runtime) => {
    it("passes the end-to-end flow driven from Node", async () => {
      const child = spawn(runtime.command, runtime.run(join(here, "..", "src", "sandbox-server.mjs")), {
        cwd: join(here, ".."),
        env: {
          ...process.env,
          CONFORMANCE_CLIENT_ID: CLIENT_ID,
          CONFORMANCE_REDIRECT_URI: `${origin}/callback`,
          NO_COLOR: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      try {
        let log = "";
        const url = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no SANDBOX_URL from ${runtime.name}:\n${log}`)), 30_000);
          const onData = (chunk: Buffer) => {
            log += chunk;
            const match = /SANDBOX_URL (\S+)/.exec(log);
            if (match) {
              clearTimeout(timer);
              resolve(match[1]!);
            }
          };
          child.stdout.on("data", onData);
          child.stderr.on("data", onData);
          child.once("exit", (code) => reject(new Error(`${runtime.name} exited (${code}):\n${log}`)));
        });
        const { runConformance } = await import(join(here, "..", "src", "flow.mjs"));
        const { httpDriver } = await import(join(here, "..", "src", "http-driver.mjs"));
        const results = await runConformance({
          baseUrl: url,
          clientId: CLIENT_ID,
          redirectUri: `${origin}/callback`,
          driver: httpDriver(url),
        });
        expectAllPassed(`sandbox on ${runtime.name}`, results);
      } finally {
        child.kill("SIGTERM");
      }
    }, 60_000);
  },
);

// workerd serves the bundled flow as a Workers module; its outbound fetches reach the sandbox on
// loopback through a network service that allows local addresses.
describe.runIf(workerd)(`on workerd, Cloudflare's Workers runtime (${workerd?.version})`, () => {
  it("passes the PKCE vectors and the end-to-end flow", async () => {
    const dir = mkdtempSync(join(tmpdir(), "workerd-"));
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    writeFileSync(join(dir, "flow-bundle.js"), esmBundle);
    writeFileSync(join(dir, "worker.js"), readFileSync(join(here, "..", "src", "worker.mjs"), "utf8"));
    writeFileSync(
      join(dir, "config.capnp"),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js"), (name = "flow-bundle.js", esModule = embed "flow-bundle.js") ],
  compatibilityDate = "2025-01-01",
  globalOutbound = "internet",
);
`,
    );
    const child = spawn(workerd!.command, workerd!.run(join(dir, "config.capnp")), {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    child.stdout.on("data", (c) => (log += c));
    child.stderr.on("data", (c) => (log += c));
    try {
      let response: Response | undefined;
      for (let i = 0; i < 100 && !response; i++) {
        try {
          response = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: JSON.stringify(options()) });
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(response, log).toBeDefined();
      expect(response!.status, log).toBe(200);
      expectAllPassed("workerd", (await response!.json()) as Result[]);
    } finally {
      child.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("on the edge runtime (Vercel's edge-runtime VM)", () => {
  it("passes the PKCE vectors and the end-to-end flow", async () => {
    const edge = new EdgeRuntime({ initialCode: bundle });
    const { baseUrl, clientId, redirectUri } = options();
    const results = (await edge.evaluate(
      `Conformance.runConformance({ baseUrl: ${JSON.stringify(baseUrl)}, clientId: ${JSON.stringify(clientId)}, redirectUri: ${JSON.stringify(redirectUri)}, driver: Conformance.httpDriver(${JSON.stringify(baseUrl)}) })`,
    )) as Result[];
    expectAllPassed("edge-runtime", JSON.parse(JSON.stringify(results)));
  }, 60_000);
});

describe.runIf(existsSync(chromiumPath))("in Chromium", () => {
  it("passes the PKCE vectors and the end-to-end flow in a page", async () => {
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      // The test plays the browser's navigation (a page cannot read a cross-origin redirect), and
      // moves the sandbox clock; the flow itself runs in the page.
      const driver = (await import(join(here, "..", "src", "http-driver.mjs"))).httpDriver(sandbox.url);
      await tab.exposeFunction("conformanceAuthorize", (url: string) => driver.authorize(url));
      await tab.exposeFunction("conformanceAdvanceClock", (s: number) => driver.advanceClock(s));
      await tab.exposeFunction("conformanceRefreshCount", () => driver.refreshCount());
      await tab.goto(`${origin}/`);
      const results = await tab.evaluate(
        (o) =>
          (globalThis as any).Conformance.runConformance({
            ...o,
            driver: {
              authorize: (url: string) => (globalThis as any).conformanceAuthorize(url),
              advanceClock: (s: number) => (globalThis as any).conformanceAdvanceClock(s),
              refreshCount: () => (globalThis as any).conformanceRefreshCount(),
            },
          }),
        options(),
      );
      expectAllPassed("chromium", results as Result[]);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
