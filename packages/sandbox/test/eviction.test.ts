import { afterEach, describe, expect, it, vi } from "vitest";
import { EVENT_RETENTION_SECONDS, REFRESH_TOKEN_LIFETIME_SECONDS } from "../src/index.js";
import { SWEEP_INTERVAL_MS } from "../src/housekeeping.js";
import {
  authorizeQuery,
  CLIENT_ID,
  getCode,
  getUser,
  postJson,
  refresh,
  REDIRECT_URI,
  signIn,
  testSandbox,
  type TokenBody,
} from "./helpers.js";

const DAY = 24 * 60 * 60;

function exchange(sandbox: ReturnType<typeof testSandbox>, code: string, verifier: string): Promise<Response> {
  return postJson(sandbox, "/oauth/token", {
    grant_type: "authorization_code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code,
    code_verifier: verifier,
  });
}

// Regression (issue 12, point 1): the cleanup pass ran inside every 1,000th issue and dropped the
// new token family before its tokens were added, so replaying that issue's code revoked nothing.
describe("a replayed code across the old 1,000-issue cleanup", () => {
  it("revokes the tokens of every code from issue 990 to issue 1,010", async () => {
    const sandbox = testSandbox();
    for (let issue = 1; issue < 990; issue += 1) sandbox.issueTokens(CLIENT_ID, ["profile:read"]);
    for (let issue = 990; issue <= 1010; issue += 1) {
      const { code, verifier } = await getCode(sandbox);
      const tokens = (await (await exchange(sandbox, code, verifier)).json()) as TokenBody;
      expect(await (await exchange(sandbox, code, verifier)).json(), `issue ${issue}`).toMatchObject({
        error: "invalid_grant",
      });
      expect((await getUser(sandbox, tokens.access_token)).status, `access token of issue ${issue}`).toBe(401);
      expect((await refresh(sandbox, tokens.refresh_token)).status, `refresh token of issue ${issue}`).toBe(400);
    }
  });

  it("revokes the tokens when the replay arrives while the first exchange is still being answered", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const [first, second] = await Promise.all([exchange(sandbox, code, verifier), exchange(sandbox, code, verifier)]);
    const answered = [first, second].find((response) => response.status === 200);
    expect([first.status, second.status].sort()).toEqual([200, 400]);
    const tokens = (await answered!.json()) as TokenBody;
    expect((await getUser(sandbox, tokens.access_token)).status).toBe(401);
    expect((await refresh(sandbox, tokens.refresh_token)).status).toBe(400);
  });

  it("revokes the tokens when a sweep runs between the exchange and the replay", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const tokens = (await (await exchange(sandbox, code, verifier)).json()) as TokenBody;
    sandbox.clock.advance(SWEEP_INTERVAL_MS / 1000); // a sweep, with the family's tokens still live
    expect((await exchange(sandbox, code, verifier)).status).toBe(400);
    expect((await refresh(sandbox, tokens.refresh_token)).status).toBe(400);
  });
});

describe("eviction of expired state", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("forgets every token, family and code once the clock passes 31 days, and the counts return to zero", async () => {
    const sandbox = testSandbox();
    for (let index = 0; index < 20; index += 1) {
      const tokens = await signIn(sandbox);
      await refresh(sandbox, tokens.refresh_token);
    }
    expect(sandbox.stats()).toMatchObject({ families: 20, accessTokens: 40, refreshTokens: 40, codes: 20 });
    sandbox.clock.advance(31 * DAY);
    expect(sandbox.stats()).toEqual({ families: 0, accessTokens: 0, refreshTokens: 0, codes: 0, pendingRequests: 0 });
  });

  it("evicts an access token at its expiry, keeps the refresh token and the family, and the refresh still works", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    sandbox.clock.advance(15 * 60);
    expect(sandbox.stats()).toMatchObject({ families: 1, accessTokens: 0, refreshTokens: 1 });
    expect((await refresh(sandbox, tokens.refresh_token)).status).toBe(200);
  });

  it("keeps a rotated refresh token while its family lives, so reuse is still detected 29 days later", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const second = (await (await refresh(sandbox, first.refresh_token)).json()) as TokenBody;
    sandbox.clock.advance(29 * DAY);
    expect(sandbox.stats()).toMatchObject({ refreshTokens: 2 });
    expect(await (await refresh(sandbox, first.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
    expect((await refresh(sandbox, second.refresh_token)).status).toBe(400);
  });

  it("drops an unused code at its expiry, and keeps a used one only while the family it issued lives", async () => {
    const sandbox = testSandbox();
    await getCode(sandbox);
    await signIn(sandbox);
    expect(sandbox.stats().codes).toBe(2);
    sandbox.clock.advance(61);
    expect(sandbox.stats().codes).toBe(1);
    sandbox.clock.advance(REFRESH_TOKEN_LIFETIME_SECONDS);
    expect(sandbox.stats()).toMatchObject({ codes: 0, families: 0 });
  });

  it("drops consent requests when their page expires", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    expect((await sandbox.app.request(authorizeQuery())).status).toBe(200);
    expect(sandbox.stats().pendingRequests).toBe(1);
    sandbox.clock.advance(10 * 60);
    expect(sandbox.stats().pendingRequests).toBe(0);
  });

  it("drops events older than 30 days of sandbox time", async () => {
    // A fixed base time: the event is exactly as old as the clock says (a real clock made it flaky).
    const sandbox = testSandbox({ now: () => 1_800_000_000_000 });
    await signIn(sandbox);
    sandbox.clock.advance(EVENT_RETENTION_SECONDS);
    expect(sandbox.events()).toHaveLength(1);
    sandbox.clock.advance(0.001);
    expect(sandbox.events()).toHaveLength(0);
  });

  it("evicts on use: a request a minute of sandbox time after the last sweep sweeps", async () => {
    let base = Date.UTC(2026, 0, 1);
    const sandbox = testSandbox({ now: () => base });
    await signIn(sandbox);
    base += 16 * 60 * 1000; // the base time moves, not the test clock: nothing is swept yet
    expect(sandbox.stats().accessTokens).toBe(1);
    await sandbox.app.request("/__sandbox/health");
    expect(sandbox.stats().accessTokens).toBe(0);
  });

  it("evicts on a timer while the sandbox is idle, and close() stops the timer", async () => {
    vi.useFakeTimers();
    let base = Date.UTC(2026, 0, 1);
    const sandbox = testSandbox({ now: () => base });
    await signIn(sandbox);
    base += 31 * DAY * 1000;
    expect(sandbox.stats().refreshTokens).toBe(1);
    vi.advanceTimersByTime(SWEEP_INTERVAL_MS);
    expect(sandbox.stats()).toMatchObject({ families: 0, accessTokens: 0, refreshTokens: 0, codes: 0 });

    const closed = testSandbox({ now: () => base });
    await signIn(closed);
    closed.close();
    base += 31 * DAY * 1000;
    vi.advanceTimersByTime(SWEEP_INTERVAL_MS * 2);
    expect(closed.stats().refreshTokens).toBe(1);
    expect(vi.getTimerCount()).toBe(1); // the first sandbox's timer only
  });
});
