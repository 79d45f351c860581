// The quick start's browser snippet, run as written in two tabs of the system Chromium that sign in
// at the same time, against a real sandbox. The snippet is one listing for two pages; it is cut at its
// own comments: the page with the "Sign in" button runs the setup and the sign-in, the page at
// /callback runs the setup, the callback and the API call. Only the reader's own values are put in
// (the sandbox's address and the app's redirect URI, both on ports chosen at run time).
//
// Regression guard for issue 20: with the pending sign-in shared through localStorage, the second
// tab's sign-in replaced the first one's, and the tabs ended with STATE_MISMATCH and
// NO_PENDING_SIGN_IN. Now each tab keeps its own (sessionStorage) by default.
import { launchChromium, type Browser, type BrowserContext, type Page } from "@tenant-integration/browser-testing";
import { toJavaScript } from "@tenant-integration/readme-samples/run";
import { DEMO_USER, startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, section } from "./support/contract.js";
import { serveTabApp, type TabApp } from "./support/tab-app.js";

const SNIPPET_TENANT = "http://127.0.0.1:4020";
const SNIPPET_REDIRECT = "http://localhost:5173/callback";
const SNIPPET_CLIENT = "demo";
const TABS = 2;

/** The quick start's browser snippet, as the reader copies it. */
function browserSnippet(): string {
  const guide = section("Quick start");
  return codeBlocks(guide.slice(guide.indexOf("### In the browser")), "ts")[0] ?? "";
}

/** The snippet cut at its comments into the parts each page runs. */
function parts(snippet: string) {
  const cut = (from: string, to?: string): string => {
    const start = snippet.indexOf(from);
    const end = to === undefined ? snippet.length : snippet.indexOf(to);
    if (start === -1 || end === -1)
      throw new Error(`the browser snippet no longer has the comment ${start === -1 ? from : to}`);
    return snippet.slice(start, end);
  };
  const signIn = snippet.indexOf('// "Sign in"');
  return {
    setup: snippet.slice(0, signIn),
    signIn: cut('// "Sign in"', "// On the page at /callback"),
    callback: cut("// On the page at /callback", '// "Disconnect"'),
  };
}

/** The app both tabs load: the sign-in page at `/` (on `window.signIn()`), the callback page at `/callback`. */
function program(snippet: string, tenant: string, redirectUri: string): string {
  const { setup, signIn, callback } = parts(
    snippet.replaceAll(SNIPPET_TENANT, tenant).replaceAll(SNIPPET_REDIRECT, redirectUri),
  );
  return toJavaScript(`${setup}
if (location.pathname === "/callback") {
  try {
${callback}
    window.__outcome = "done";
  } catch (e) {
    window.__outcome = (e && e.code) || String(e);
  }
} else {
  window.signIn = async () => {
${signIn}
  };
}
`);
}

let sandbox: RunningSandbox;
let app: TabApp;
let browser: Browser;
let context: BrowserContext;
const pageErrors: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1", clients: [], autoApprove: true });
  app = await serveTabApp((url) => program(browserSnippet(), sandbox.url, `${url}/callback`));
  sandbox.sandbox.clients.register({ id: SNIPPET_CLIENT, redirectUris: [`${app.url}/callback`] });
  browser = await launchChromium({ timeout: 30_000 });
  context = await browser.newContext();
  context.setDefaultTimeout(15_000);
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await sandbox?.close();
});

describe("the quick start's browser snippet", () => {
  it("is cut at the comments the pages need", () => {
    const { setup, signIn, callback } = parts(browserSnippet());
    expect(setup).toContain("createTokenManager(");
    expect(signIn).toContain("beginAuthorization()");
    expect(callback).toContain("completeAuthorization(location.href)");
    expect(callback).toContain('client.GET("/api/v1/auth/user")');
  });

  it(`signs in from ${TABS} tabs at the same time: every tab completes its own sign-in and gets the user`, async () => {
    const tabs: Page[] = [];
    for (let i = 0; i < TABS; i++) {
      const page = await context.newPage();
      page.on("pageerror", (error) => pageErrors.push(String(error)));

      await page.goto(`${app.url}/`);
      await page.waitForFunction(() => typeof (window as { signIn?: unknown }).signIn === "function", undefined, {
        polling: 50,
      });
      tabs.push(page);
    }
    // Hold every tab at the tenant's authorize endpoint until all tabs are there, so that the tabs
    // really overlap: every pending sign-in is stored before any callback comes back. (The callback
    // itself cannot be held: it is the answer to the tenant's redirect, which routes never see.)
    const held: (() => void)[] = [];
    let allBack!: () => void;
    const back = new Promise<void>((resolve) => (allBack = resolve));
    await context.route(
      (url) => url.href.startsWith(`${sandbox.url}/oauth/authorize?`),
      async (route) => {
        await new Promise<void>((release) => {
          held.push(release);
          if (held.length === TABS) allBack();
        });
        await route.continue();
      },
    );
    await Promise.all(
      tabs.map((page) => page.evaluate(() => void (window as unknown as { signIn(): Promise<void> }).signIn())),
    );
    await back;
    for (const release of held) release();

    const outcomes = await Promise.all(
      tabs.map(async (page) => {
        // Polled on a timer: a tab in the background gets no animation frames.
        await page.waitForFunction(() => (window as { __outcome?: string }).__outcome !== undefined, undefined, {
          polling: 50,
        });
        return page.evaluate(() => ({
          outcome: (window as { __outcome?: string }).__outcome,
          printed: (window as unknown as { __console: unknown[][] }).__console,
          pendingInLocalStorage: Object.keys(localStorage).filter((key) => key.endsWith(":pending")),
        }));
      }),
    );
    expect(outcomes).toEqual(
      tabs.map(() => ({
        outcome: "done",
        printed: [["log", expect.objectContaining({ name: DEMO_USER["name"] })]],
        pendingInLocalStorage: [],
      })),
    );
    const exchanges = sandbox.sandbox.events().filter((event) => event.grantType === "authorization_code");
    expect(exchanges.map((event) => event.outcome)).toEqual(tabs.map(() => "ok"));
    expect(pageErrors).toEqual([]);
  });
});
