// Two tabs of the system Chromium, each with a token manager on `webStorage(localStorage)` and
// nothing else (the quick start's setup), against a real sandbox: what one tab does to the session
// reaches the other as an event, and the other never asks the tenant to know whether it is signed in.
//
// Regression guard for issue 20: there were no `isSignedIn()`/`getSession()` without a request and
// no events across tabs; a tab that signed out left the others handing out the old access token
// from memory until it expired.
import { launchChromium, type Browser, type BrowserContext, type Page } from "@tenant-integration/browser-testing";
import { startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serveTabApp, type TabApp } from "./support/tab-app.js";

const CLIENT_ID = "demo";
const SIXTEEN_MINUTES_S = 16 * 60;

/** Each tab: a manager like the quick start's, its events kept as plain JSON in `window.events`. */
const program = (tenant: string, appUrl: string): string => `
import { createTokenManager, webStorage } from "@tenant-integration/token-manager";
window.clockOffsetMs = 0;
window.tm = createTokenManager({
  baseUrl: ${JSON.stringify(tenant)},
  clientId: ${JSON.stringify(CLIENT_ID)},
  redirectUri: ${JSON.stringify(`${appUrl}/callback`)},
  scopes: ["profile:read"],
  storage: webStorage(localStorage),
  now: () => Date.now() + window.clockOffsetMs,
});
window.events = [];
for (const name of ["signed-in", "signed-out", "session-ended", "revoked"]) {
  tm.on(name, (payload) => {
    const error = payload?.error && { name: payload.error.name, code: payload.error.code, error: payload.error.error };
    window.events.push([name, payload === undefined ? null : { ...payload, ...(error && { error }) }]);
  });
}
window.ready = true;
`;

interface TabWindow {
  tm: {
    beginAuthorization(): Promise<{ url: string }>;
    completeAuthorization(url: string): Promise<unknown>;
    getAccessToken(): Promise<string>;
    isSignedIn(): Promise<boolean>;
    getSession(): Promise<unknown>;
    signOut(): Promise<void>;
    revoke(): Promise<void>;
  };
  events: unknown[];
  clockOffsetMs: number;
}

let sandbox: RunningSandbox;
let app: TabApp;
let browser: Browser;
let context: BrowserContext;
let tabs: { page: Page; tenantRequests: string[] }[];
const pageErrors: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1", clients: [], autoApprove: true, testClock: true });
  app = await serveTabApp((url) => program(sandbox.url, url));
  sandbox.sandbox.clients.register({ id: CLIENT_ID, redirectUris: [`${app.url}/callback`] });
  browser = await launchChromium({ timeout: 30_000 });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await sandbox?.close();
});

// A fresh origin state per test: a new context has its own localStorage.
beforeEach(async () => {
  context = await browser.newContext();
  context.setDefaultTimeout(15_000);
  tabs = [];
  for (let i = 0; i < 2; i++) {
    const page = await context.newPage();
    const tenantRequests: string[] = [];
    page.on("request", (request) => {
      if (request.url().startsWith(sandbox.url))
        tenantRequests.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${app.url}/`);
    await page.waitForFunction(() => (window as { ready?: boolean }).ready === true, undefined, { polling: 50 });
    tabs.push({ page, tenantRequests });
  }
});

afterEach(async () => {
  await context.close();
  expect(pageErrors).toEqual([]);
});

/** Signs in from `page`: begin there, let the sandbox approve (the test plays the browser), complete there. */
async function signIn(page: Page): Promise<void> {
  const url = await page.evaluate(() => (window as unknown as TabWindow).tm.beginAuthorization().then((r) => r.url));
  const callback = (await fetch(url, { redirect: "manual" })).headers.get("location") ?? "";
  await page.evaluate(
    (callbackUrl) => (window as unknown as TabWindow).tm.completeAuthorization(callbackUrl).then(() => undefined),
    callback,
  );
}

/** Waits (on a timer: a background tab gets no animation frames) until the tab has seen `count` events, and returns them. */
async function eventsOf(page: Page, count: number): Promise<unknown[]> {
  await page.waitForFunction((n) => (window as unknown as { events: unknown[] }).events.length >= n, count, {
    polling: 50,
  });
  return page.evaluate(() => (window as unknown as TabWindow).events);
}

const ask = (page: Page) =>
  page.evaluate(async () => ({
    signedIn: await (window as unknown as TabWindow).tm.isSignedIn(),
    session: await (window as unknown as TabWindow).tm.getSession(),
  }));

/** The tab's getAccessToken(): the token, or the code it failed with. */
interface Outcome {
  token?: string | undefined;
  code?: string | undefined;
}
const tokenOrCode = (page: Page): Promise<Outcome> =>
  page.evaluate(() =>
    (window as unknown as TabWindow).tm.getAccessToken().then(
      (token): Outcome => ({ token }),
      (e: { code?: string }): Outcome => ({ code: e.code }),
    ),
  );

describe("two tabs sharing webStorage(localStorage)", () => {
  it("a sign-in in one tab reaches the other as signed-in; the other tells the session and gets its token without a request", async () => {
    const [a, b] = tabs as [(typeof tabs)[0], (typeof tabs)[0]];
    expect(await ask(b.page)).toEqual({ signedIn: false });
    await signIn(a.page);

    const [event] = await eventsOf(b.page, 1);
    expect(event).toEqual(["signed-in", { expiresAt: expect.any(Number), scope: "profile:read", otherTab: true }]);
    expect(await eventsOf(a.page, 1)).toEqual([["signed-in", expect.objectContaining({ otherTab: false })]]);
    expect(await ask(b.page)).toEqual({
      signedIn: true,
      session: { expiresAt: expect.any(Number), scope: "profile:read" },
    });
    expect((await tokenOrCode(b.page)).token).toMatch(/.+/);
    expect(b.tenantRequests).toEqual([]);
  });

  it("a sign-out in one tab reaches the other as signed-out, and the other stops handing out the old access token, without a request", async () => {
    const [a, b] = tabs as [(typeof tabs)[0], (typeof tabs)[0]];
    await signIn(a.page);
    const { token } = await tokenOrCode(b.page); // now held in b's memory
    expect(token).toMatch(/.+/);
    await eventsOf(b.page, 1);

    await a.page.evaluate(() => (window as unknown as TabWindow).tm.signOut());

    expect((await eventsOf(b.page, 2))[1]).toEqual(["signed-out", { revoked: false, otherTab: true }]);
    expect(await tokenOrCode(b.page)).toEqual({ code: "NOT_SIGNED_IN" });
    expect(await ask(b.page)).toEqual({ signedIn: false });
    expect(b.tenantRequests).toEqual([]);
  });

  it("a revocation in one tab reaches the other as signed-out with revoked", async () => {
    const [a, b] = tabs as [(typeof tabs)[0], (typeof tabs)[0]];
    await signIn(a.page);
    await eventsOf(b.page, 1);
    await b.page.evaluate(() => (window as unknown as TabWindow).tm.revoke());
    expect((await eventsOf(a.page, 2))[1]).toEqual(["signed-out", { revoked: true, otherTab: true }]);
    expect(await tokenOrCode(a.page)).toEqual({ code: "NOT_SIGNED_IN" });
  });

  it("the end of the session seen by one tab (its refresh refused with invalid_grant) reaches the other as session-ended", async () => {
    const [a, b] = tabs as [(typeof tabs)[0], (typeof tabs)[0]];
    await signIn(a.page);
    await eventsOf(b.page, 1);
    // The tenant revokes the session's refresh token; then the access token expires.
    const refreshToken = await a.page.evaluate(() => {
      const key = Object.keys(localStorage).find((k) => k.endsWith(":tokens")) ?? "";
      return (JSON.parse(localStorage.getItem(key) ?? "{}") as { refresh_token?: string }).refresh_token ?? "";
    });
    const revoked = await fetch(`${sandbox.url}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: refreshToken, token_type_hint: "refresh_token", client_id: CLIENT_ID }),
    });
    expect(revoked.status).toBe(200);
    sandbox.sandbox.clock.advance(SIXTEEN_MINUTES_S);
    await a.page.evaluate((ms) => ((window as unknown as TabWindow).clockOffsetMs = ms), SIXTEEN_MINUTES_S * 1000);

    expect(await tokenOrCode(a.page)).toEqual({ code: "SESSION_ENDED" });

    expect((await eventsOf(b.page, 2))[1]).toEqual([
      "session-ended",
      { error: { name: "SessionEndedError", code: "SESSION_ENDED", error: "invalid_grant" }, otherTab: true },
    ]);
    expect(await ask(b.page)).toEqual({ signedIn: false });
    expect(b.tenantRequests).toEqual([]);
  });
});
