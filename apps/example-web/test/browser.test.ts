// The built example app in the system Chromium against a real sandbox: sign-in through the consent
// page, a silent refresh after the clock moves, sign-out with revocation, many tabs sharing one
// refresh, and a tampered callback. Screenshots of the key steps go to test-results/screenshots/.
import type { Page } from "@tenant-integration/browser-testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { settledState, signIn, startStack, storedAccessToken, type Stack } from "./support/stack.js";

const SIXTEEN_MINUTES_S = 16 * 60;

let stack: Stack;

beforeEach(async () => {
  stack = await startStack();
});

afterEach(async () => {
  await stack.stop();
});

/**
 * Moves both clocks past the 15-minute access token lifetime: the sandbox's, and the browser's
 * (installed with `context.clock.install()` before the pages opened). The browser's time is then held
 * at one value: Playwright runs a separate fake clock in every page, and those drift apart by tens of
 * milliseconds, whereas real tabs share the system clock. Without this, a tab whose fake clock lags
 * sees the tokens another tab just stored as received "in the future" and refreshes again.
 */
async function expireAccessToken(): Promise<void> {
  stack.sandbox.sandbox.clock.advance(SIXTEEN_MINUTES_S);
  await stack.context.clock.setFixedTime(Date.now() + SIXTEEN_MINUTES_S * 1000);
}

/** Polls the origin's Web Locks (shared by all tabs) until `pending` requests wait; gives up after 10 s. */
async function waitForPendingLocks(page: Page, pending: number): Promise<{ held: number; pending: number }> {
  let snapshot = { held: 0, pending: 0 };
  for (let attempt = 0; attempt < 200 && snapshot.pending < pending; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    snapshot = await page.evaluate(async () => {
      const { held = [], pending = [] } = await navigator.locks.query();
      return { held: held.length, pending: pending.length };
    });
  }
  return snapshot;
}

const refreshes = () => stack.tokenEvents().filter((event) => event.grantType === "refresh_token");

describe("example web app", () => {
  it("signs in through the consent page and shows the user", async () => {
    const page = await stack.newPage();
    await page.goto(stack.web.url);
    expect(await settledState(page)).toBe("signed-out");
    await stack.screenshot(page, "01-signed-out");

    await signIn(stack, page, "02");

    expect(await page.getByTestId("user-name").innerText()).toBe("Ada Lovelace");
    expect(JSON.parse(await page.getByTestId("user").innerText())).toMatchObject({
      name: "Ada Lovelace",
      email: "ada@example.org",
    });
    expect(page.url()).toBe(`${stack.web.url}/`); // code and state are gone from the address bar
    expect(stack.tokenEvents().map((event) => [event.grantType, event.outcome])).toEqual([
      ["authorization_code", "ok"],
    ]);
    await stack.screenshot(page, "03-signed-in");
    expect(stack.pageErrors).toEqual([]);
  });

  it("refreshes the expired access token exactly once, silently, and still shows the user", async () => {
    await stack.context.clock.install();
    const page = await stack.newPage();
    await signIn(stack, page);
    const before = await storedAccessToken(page);

    await expireAccessToken();
    await page.getByTestId("reload-user").click();

    expect(await settledState(page)).toBe("signed-in");
    expect(await page.getByTestId("user-name").innerText()).toBe("Ada Lovelace");
    expect(refreshes().map((event) => event.outcome)).toEqual(["ok"]);
    expect(await storedAccessToken(page)).not.toBe(before);
    await stack.screenshot(page, "04-after-refresh");
    expect(stack.pageErrors).toEqual([]);
  });

  it("signs out by revoking: the old access token is refused by the tenant afterwards", async () => {
    const page = await stack.newPage();
    await signIn(stack, page);
    const accessToken = await storedAccessToken(page);
    const userWith = (token: string) =>
      fetch(`${stack.sandbox.url}/api/v1/auth/user`, { headers: { authorization: `Bearer ${token}` } });
    expect((await userWith(accessToken)).status).toBe(200);

    await page.getByTestId("sign-out").click();

    expect(await settledState(page)).toBe("signed-out");
    expect(await page.getByTestId("notice").innerText()).toContain("revoked");
    expect((await userWith(accessToken)).status).toBe(401);
    const revokes = stack.sandbox.sandbox.events().filter((event) => event.endpoint === "revoke");
    expect(revokes.map((event) => [event.clientId, event.outcome])).toEqual([["demo", "ok"]]);
    expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.endsWith(":tokens")))).toEqual([]);
    await stack.screenshot(page, "05-signed-out-after-revoke");
    expect(stack.pageErrors).toEqual([]);
  });

  describe.each([2, 5])("with %i tabs sharing localStorage and an expired token", (tabs) => {
    // Guards the cross-tab single refresh: the tab that takes the lock next must see the tokens the
    // previous holder stored, or it presents a rotated-away refresh token and the sandbox revokes the
    // whole family (invalid_grant, every tab signed out).
    it("makes exactly one refresh when every tab reloads the user at once, and every tab shows the user", async () => {
      await stack.context.clock.install();
      const first = await stack.newPage();
      await signIn(stack, first);
      const pages: Page[] = [first];
      for (let i = 1; i < tabs; i++) {
        const page = await stack.newPage();
        await page.goto(stack.web.url);
        expect(await settledState(page)).toBe("signed-in"); // the session is shared, no sign-in
        pages.push(page);
      }
      expect(refreshes()).toEqual([]);

      // Hold the refresh request until every other tab waits for the same Web Lock, so the tabs
      // really contend (and do not merely run one after the other).
      let locksDuringRefresh: { held: number; pending: number } | undefined;
      await stack.context.route(`${stack.sandbox.url}/oauth/token`, async (route) => {
        if (route.request().method() === "POST" && locksDuringRefresh === undefined)
          locksDuringRefresh = await waitForPendingLocks(first, tabs - 1);
        await route.continue();
      });

      await expireAccessToken();
      // Click in every tab without waiting for one before the next.
      await Promise.all(pages.map((page) => page.getByTestId("reload-user").click()));

      const states = await Promise.all(pages.map((page) => settledState(page).catch(() => "still loading")));
      const names = await Promise.all(pages.map((page) => page.getByTestId("view").innerText()));
      // One comparison, so that a failure shows everything at once.
      expect({
        locksDuringRefresh,
        states,
        users: names.map((text) => text.includes("Signed in as Ada Lovelace")),
        refreshOutcomes: refreshes().map((event) => event.outcome),
        invalidGrants: stack.tokenEvents().filter((event) => event.outcome === "invalid_grant").length,
      }).toEqual({
        locksDuringRefresh: { held: 1, pending: tabs - 1 },
        states: Array.from({ length: tabs }, () => "signed-in"),
        users: Array.from({ length: tabs }, () => true),
        refreshOutcomes: ["ok"],
        invalidGrants: 0,
      });
      if (tabs === 5) await stack.screenshot(pages[4]!, "06-fifth-tab-after-shared-refresh");
      expect(stack.pageErrors).toEqual([]);
    });
  });

  it("rejects a callback whose state was tampered with, showing the error and sending no token request", async () => {
    const page = await stack.newPage();
    const requests: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    // Let the sandbox answer the Approve click with its real redirect (a real code), then change one
    // character of the state in that redirect's Location before the browser follows it.
    let tampered: string | undefined;
    await page.route(`${stack.sandbox.url}/__sandbox/consent`, async (route) => {
      const response = await route.fetch({ maxRedirects: 0 });
      const location = new URL(response.headers()["location"] ?? "");
      const state = location.searchParams.get("state") ?? "";
      tampered = `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`;
      location.searchParams.set("state", tampered);
      await route.fulfill({ status: 302, headers: { location: location.href } });
    });
    await page.goto(stack.web.url);
    await page.getByTestId("sign-in").click();
    await page.waitForURL((url) => url.href.startsWith(`${stack.sandbox.url}/oauth/authorize?`));
    await page.getByRole("button", { name: "Approve" }).click();

    expect(await settledState(page)).toBe("error");
    // Pending sign-ins are found by their state (spec/token-store): a tampered state finds none.
    expect(await page.getByTestId("error-code").innerText()).toBe("NO_PENDING_SIGN_IN");
    expect(await page.getByTestId("error-message").innerText()).toContain("nothing was sent to the tenant");
    const callbacks = requests
      .filter((url) => url.startsWith(`${stack.web.url}/callback?`))
      .map((url) => new URL(url).searchParams);
    expect(callbacks).toHaveLength(1);
    expect(callbacks[0]?.get("state")).toBe(tampered);
    expect(callbacks[0]?.get("code")).toMatch(/.+/);
    expect(requests.filter((url) => new URL(url).pathname === "/oauth/token")).toEqual([]);
    expect(stack.tokenEvents()).toEqual([]);
    await stack.screenshot(page, "07-tampered-state-rejected");
    expect(stack.pageErrors).toEqual([]);
  });
});
