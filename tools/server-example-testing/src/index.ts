/**
 * The Chromium test every kit's example server app passes (issue 39: a server acting for many users).
 * An app gives its start command; the harness starts a sandbox, the app and Debian's Chromium, and
 * checks, through the pages a person uses:
 *
 * - two users of one server, each in a browser of their own, connect their tenant accounts at once,
 *   each choosing another user on the sandbox's consent page, approved in the reverse order; each
 *   then sees only their own `GET /api/v1/auth/user`, and still does after both pages reload;
 * - a callback replayed in another browser (the login CSRF of RFC 9700 §4.7.1) is refused before any
 *   code exchange, and the browser that began that sign-in is not connected by it;
 * - two tabs of one browser that both click "Connect" both complete.
 *
 * The app's side of the contract is in this package's README: environment variables, and the
 * `data-testid` of the page's few elements.
 *
 * @packageDocumentation
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { type Browser, type BrowserContext, launchChromium, type Page } from "@tenant-integration/browser-testing";
import { type RunningSandbox, startSandbox } from "@tenant-integration/sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** The OAuth client the harness registers for the app. */
export const CLIENT_ID = "example-server";

/** How to start an example server app. */
export interface ServerExample {
  /** The name of the suite, e.g. "Go example server". */
  readonly name: string;
  /** The command and its arguments, e.g. `["bin/example-go-server"]`; run in `cwd`. */
  readonly command: readonly string[];
  /** The directory the command runs in (the app's). */
  readonly cwd: string;
  /** More environment variables for the app. */
  readonly env?: Readonly<Record<string, string>>;
  /** Where screenshots of the key steps go (default `<cwd>/test-results/screenshots`). */
  readonly screenshots?: string;
}

/** A started stack: the sandbox, the app and Chromium, stopped by `stop()`. */
export interface ServerStack {
  readonly sandbox: RunningSandbox;
  /** The app's origin, e.g. `http://127.0.0.1:41237`. */
  readonly url: string;
  readonly browser: Browser;
  /** The app's standard output and error so far, for failure messages. */
  output(): string;
  /** A new browser: a context with cookies of its own. */
  newBrowser(): Promise<BrowserContext>;
  /** The sandbox's successful code exchanges so far. */
  exchanges(): number;
  screenshot(page: Page, name: string): Promise<void>;
  stop(): Promise<void>;
}

/** A free loopback port, chosen by the system. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Waits until the app answers `GET /`, or fails with its output when it exits or stays silent. */
async function waitForApp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the app exited (${String(child.exitCode)}):\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the app did not answer GET / at ${url} within 30 s:\n${output()}`);
}

/** Starts the sandbox, the app (registered as an OAuth client with its callback) and Chromium. */
export async function startServerStack(example: ServerExample): Promise<ServerStack> {
  const screenshots = example.screenshots ?? join(example.cwd, "test-results", "screenshots");
  mkdirSync(screenshots, { recursive: true });
  const started: Array<() => Promise<unknown>> = [];
  const stop = async (): Promise<void> => {
    for (const close of started.reverse()) await close().catch(() => {});
  };
  try {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", testClock: true, clients: [] });
    started.push(() => sandbox.close());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    sandbox.sandbox.clients.register({ id: CLIENT_ID, redirectUris: [`${url}/callback`] });
    const [command = "", ...args] = example.command;
    const child = spawn(command, args, {
      cwd: example.cwd,
      env: {
        ...process.env,
        PORT: String(port),
        TENANT_URL: sandbox.url,
        CLIENT_ID,
        REDIRECT_URI: `${url}/callback`,
        ...example.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    started.push(async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    });
    await waitForApp(url, child, () => output);
    const browser = await launchChromium({ timeout: 30_000 });
    started.push(() => browser.close());
    return {
      sandbox,
      url,
      browser,
      output: () => output,
      async newBrowser() {
        const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
        context.setDefaultTimeout(15_000);
        started.push(() => context.close());
        return context;
      },
      exchanges: () =>
        sandbox.sandbox.events().filter((event) => event.grantType === "authorization_code" && event.outcome === "ok")
          .length,
      async screenshot(page, name) {
        await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Opens the app in a new page of `context` and logs in as `user` with the app's own login. */
export async function logIn(stack: ServerStack, context: BrowserContext, user: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(stack.url);
  await page.getByTestId("login-name").fill(user);
  await page.getByTestId("login").click();
  await expect.poll(() => page.getByTestId("app-user").textContent()).toBe(user);
  return page;
}

/** Clicks "Connect your tenant account" and waits for the sandbox's consent page. */
export async function openConsent(stack: ServerStack, page: Page): Promise<void> {
  await page.getByTestId("connect").click();
  await page.waitForURL((url) => url.href.startsWith(`${stack.sandbox.url}/oauth/authorize?`));
}

/** On the consent page: signs in as the sandbox user `sandboxUser` and approves. */
export async function approveAs(page: Page, sandboxUser: string): Promise<void> {
  await page.getByLabel("Sign in as").selectOption(sandboxUser);
  await page.getByRole("button", { name: "Approve" }).click();
}

/** The tenant user the app shows, parsed from its `tenant-user` element. */
export async function tenantUserShown(page: Page): Promise<Record<string, unknown>> {
  const text = await page.getByTestId("tenant-user").textContent({ timeout: 15_000 });
  return JSON.parse(text ?? "null") as Record<string, unknown>;
}

/**
 * Defines the suite of an example server app: call it at the top level of a vitest test file.
 *
 * @example
 * ```ts
 * describeServerExample({ name: "Go example server", command: ["bin/example-go-server"], cwd: appDir });
 * ```
 */
export function describeServerExample(example: ServerExample): void {
  describe(example.name, () => {
    let stack: ServerStack;

    beforeEach(async () => {
      stack = await startServerStack(example);
    });

    afterEach(async () => {
      await stack?.stop();
    });

    it("two users connect at once, each choosing another sandbox user, and each sees only their own", async () => {
      const [adaBrowser, graceBrowser] = [await stack.newBrowser(), await stack.newBrowser()];
      const ada = await logIn(stack, adaBrowser, "ada");
      const grace = await logIn(stack, graceBrowser, "grace");
      await openConsent(stack, ada);
      await openConsent(stack, grace); // both sign-ins pending at once on one server
      await stack.screenshot(ada, "01-consent-ada");
      await approveAs(grace, "44"); // approved in the reverse order
      await approveAs(ada, "43");
      await ada.waitForURL(`${stack.url}/`);
      await grace.waitForURL(`${stack.url}/`);
      expect(await tenantUserShown(ada), stack.output()).toMatchObject({ id: 43, name: "Grace Hopper" });
      expect(await tenantUserShown(grace), stack.output()).toMatchObject({ id: 44 });
      await stack.screenshot(ada, "02-connected-ada");
      await stack.screenshot(grace, "03-connected-grace");
      for (const page of [ada, grace]) await page.reload();
      expect(await tenantUserShown(ada)).toMatchObject({ id: 43 });
      expect(await tenantUserShown(grace)).toMatchObject({ id: 44 });
      expect(stack.exchanges()).toBe(2);
    });

    it("refuses a callback replayed in another browser before any exchange", async () => {
      const [malloryBrowser, adaBrowser] = [await stack.newBrowser(), await stack.newBrowser()];
      const mallory = await logIn(stack, malloryBrowser, "mallory");
      const ada = await logIn(stack, adaBrowser, "ada");
      // Mallory approves a sign-in to her own tenant account, and keeps its callback URL instead of
      // following it: the login CSRF of RFC 9700 §4.7.1 sends it to a victim.
      let stolen = "";
      await malloryBrowser.route(`${stack.sandbox.url}/__sandbox/consent`, async (route) => {
        const approved = await route.fetch({ maxRedirects: 0 }); // the sandbox's redirect to the callback
        stolen = approved.headers()["location"] ?? "";
        await route.abort();
      });
      await openConsent(stack, mallory);
      await approveAs(mallory, "44");
      await expect.poll(() => stolen).not.toBe("");
      const response = await ada.goto(stolen);
      expect(response?.status()).toBe(400);
      const refusal = (await ada.textContent("body")) ?? "";
      expect(refusal).toContain("another browser");
      expect(refusal).not.toContain(new URL(stolen).searchParams.get("state") ?? "no state");
      await stack.screenshot(ada, "04-replayed-callback-refused");
      expect(stack.exchanges()).toBe(0);
      await ada.goto(stack.url);
      await expect.poll(() => ada.getByTestId("connect").count()).toBe(1); // Ada is not connected to Mallory's account
      // Used up: even Mallory's own browser cannot complete it now.
      await malloryBrowser.unrouteAll({ behavior: "ignoreErrors" });
      expect((await mallory.goto(stolen))?.status()).toBe(400);
      expect(stack.exchanges()).toBe(0);
    });

    it("two tabs of one browser that both click Connect both complete", async () => {
      const context = await stack.newBrowser();
      const first = await logIn(stack, context, "ada");
      const second = await context.newPage();
      await second.goto(stack.url);
      await openConsent(stack, first);
      await openConsent(stack, second);
      await approveAs(second, "42");
      await second.waitForURL(`${stack.url}/`);
      await approveAs(first, "43");
      await first.waitForURL(`${stack.url}/`);
      expect(await tenantUserShown(first)).toMatchObject({ id: 43 }); // the last one completed
      expect(stack.exchanges()).toBe(2);
    });
  });
}
