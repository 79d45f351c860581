// One sandbox, one served build of the example and one Chromium per test, all on loopback ports
// chosen at run time, all stopped by `stop()` (also when the test fails).
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, type Browser, type BrowserContext, type Page } from "@tenant-integration/browser-testing";
import { startSandbox, type RunningSandbox, type SandboxEvent } from "@tenant-integration/sandbox";
import { serveExampleWeb, type ExampleWebServer } from "@tenant-integration/example-web/serve";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SCREENSHOTS = join(appDir, "test-results", "screenshots");
export const CLIENT_ID = "demo";

export interface Stack {
  sandbox: RunningSandbox;
  web: ExampleWebServer;
  browser: Browser;
  context: BrowserContext;
  /** Uncaught errors of every page of the context. */
  pageErrors: string[];
  newPage(): Promise<Page>;
  screenshot(page: Page, name: string): Promise<void>;
  tokenEvents(): SandboxEvent[];
  stop(): Promise<void>;
}

export async function startStack(): Promise<Stack> {
  if (!existsSync(join(appDir, "dist", "index.html"))) {
    throw new Error("apps/example-web/dist is missing: run `pnpm build` first (turbo's test task does)");
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  const started: Array<() => Promise<unknown>> = [];
  const stop = async (): Promise<void> => {
    for (const close of started.reverse()) await close().catch(() => {});
  };
  try {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", testClock: true, clients: [] });
    started.push(() => sandbox.close());
    const web = await serveExampleWeb({ port: 0, host: "127.0.0.1", tenantUrl: sandbox.url, clientId: CLIENT_ID });
    started.push(() => web.close());
    // The port of the app is known only now: register its exact redirect URI.
    sandbox.sandbox.clients.register({ id: CLIENT_ID, redirectUris: [`${web.url}/callback`] });
    const browser = await launchChromium({ timeout: 30_000 });
    started.push(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
    // A route handler still running when the test ends (say, after a failed assertion) is dropped.
    started.push(() => context.unrouteAll({ behavior: "ignoreErrors" }));
    context.setDefaultTimeout(15_000);
    const pageErrors: string[] = [];
    return {
      sandbox,
      web,
      browser,
      context,
      pageErrors,
      async newPage() {
        const page = await context.newPage();
        page.on("pageerror", (error) => pageErrors.push(String(error)));
        return page;
      },
      async screenshot(page, name) {
        await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
      },
      tokenEvents: () => sandbox.sandbox.events().filter((event) => event.endpoint === "token"),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Waits until the app has finished what it was doing and returns what it shows. */
export async function settledState(page: Page): Promise<string | null> {
  const view = page.getByTestId("view");
  await page.locator('[data-testid="view"][data-state]:not([data-state="loading"])').waitFor();
  return view.getAttribute("data-state");
}

/** Signs in through the sandbox's consent page, clicking Approve, and waits for the user. */
export async function signIn(stack: Stack, page: Page, screenshotPrefix?: string): Promise<void> {
  await page.goto(stack.web.url);
  await page.getByTestId("sign-in").click();
  await page.waitForURL((url) => url.href.startsWith(`${stack.sandbox.url}/oauth/authorize?`));
  if (screenshotPrefix !== undefined) await stack.screenshot(page, `${screenshotPrefix}-consent`);
  await page.getByRole("button", { name: "Approve" }).click();
  await page.waitForURL(`${stack.web.url}/`);
  if ((await settledState(page)) !== "signed-in") {
    throw new Error(`sign-in ended in ${await page.getByTestId("view").innerText()}`);
  }
}

/** The access token the app stored, read from localStorage. */
export async function storedAccessToken(page: Page): Promise<string> {
  const value = await page.evaluate(() => {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i) ?? "";
      if (key.endsWith(":tokens")) return localStorage.getItem(key);
    }
    return null;
  });
  if (value === null) throw new Error("no tokens in localStorage");
  return (JSON.parse(value) as { access_token: string }).access_token;
}
