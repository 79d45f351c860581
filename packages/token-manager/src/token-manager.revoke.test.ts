import { describe, expect, it } from "vitest";
import { OAuthResponseError, TransientError } from "./errors.js";
import { failure } from "./test-support/failure.js";
import { BASE, CLIENT_ID, json, setup, signIn } from "./test-support/harness.js";

const TOKENS_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:tokens`;

async function signedIn() {
  const h = setup();
  await signIn(h.tm);
  h.calls.length = 0;
  return h;
}

describe("revoke", () => {
  it("sends POST /oauth/revoke with a form body of the current access token, then clears storage and fires revoked", async () => {
    const h = await signedIn();
    let revoked = 0;
    h.tm.on("revoked", () => revoked++);
    await h.tm.revoke();
    expect(h.calls).toHaveLength(1);
    const [call] = h.calls;
    expect(call?.url).toBe(`${BASE}/oauth/revoke`);
    expect(call?.method).toBe("POST");
    expect(call?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(call?.redirect).toBe("manual");
    expect(Object.fromEntries(new URLSearchParams(call?.body))).toEqual({
      token: "at_1",
      token_type_hint: "access_token",
      client_id: CLIENT_ID,
    });
    expect(revoked).toBe(1);
    expect(await h.storage.get(TOKENS_KEY)).toBeUndefined();
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
  });

  it("refreshes an expired access token first, and revokes the new one", async () => {
    const h = await signedIn();
    h.clock.advance(900_000);
    await h.tm.revoke();
    expect(h.calls.map((c) => c.url)).toEqual([`${BASE}/oauth/token`, `${BASE}/oauth/revoke`]);
    expect(new URLSearchParams(h.calls[1]?.body).get("token")).toBe("at_2");
  });

  it("keeps the tokens when the server refuses, so that the caller can retry or sign out", async () => {
    const h = await signedIn();
    h.server.queue.push(() => json(400, { error: "unsupported_token_type" }));
    await expect(h.tm.revoke()).rejects.toBeInstanceOf(OAuthResponseError);
    h.server.queue.push(() => new Response("", { status: 503 }));
    await expect(h.tm.revoke()).rejects.toBeInstanceOf(TransientError);
    expect(await h.tm.getAccessToken()).toBe("at_1");
  });

  it("only clears when there is no session, with no request", async () => {
    const h = setup();
    let revoked = 0;
    h.tm.on("revoked", () => revoked++);
    await h.tm.revoke();
    expect(h.calls).toHaveLength(0);
    expect(revoked).toBe(0);
  });
});

describe("signOut", () => {
  it("clears the tokens locally without any request", async () => {
    const h = await signedIn();
    await h.tm.signOut();
    expect(h.calls).toHaveLength(0);
    expect(await h.storage.get(TOKENS_KEY)).toBeUndefined();
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
  });
});

describe("events", () => {
  it("subscribes with on, and unsubscribes with the returned function or with off", async () => {
    const h = await signedIn();
    const a: number[] = [];
    const b: number[] = [];
    const listenerB = (info: { expiresAt: number }) => b.push(info.expiresAt);
    const unsubscribeA = h.tm.on("tokens-refreshed", (info) => a.push(info.expiresAt));
    h.tm.on("tokens-refreshed", listenerB);
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    unsubscribeA();
    h.tm.off("tokens-refreshed", listenerB);
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
  });

  it("ignores a throwing listener: the token is handed out and the next listener still runs", async () => {
    const h = await signedIn();
    const after: number[] = [];
    h.tm.on("tokens-refreshed", () => {
      throw new Error("listener bug");
    });
    h.tm.on("tokens-refreshed", (info) => after.push(info.expiresAt));
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(after).toHaveLength(1);
    expect(h.server.refreshes).toBe(1);
  });
});
