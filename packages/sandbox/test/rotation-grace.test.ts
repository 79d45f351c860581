import { describe, expect, it } from "vitest";
import { createSandbox, MAX_ROTATION_GRACE_SECONDS } from "../src/index.js";
import { getUser, refresh, signIn, testSandbox, type TokenBody } from "./helpers.js";

async function rotate(sandbox: ReturnType<typeof testSandbox>, refreshToken: string): Promise<TokenBody> {
  const response = await refresh(sandbox, refreshToken);
  expect(response.status).toBe(200);
  return (await response.json()) as TokenBody;
}

describe("rotation grace 0 (the default): strict rotation", () => {
  it("revokes the family when the rotated-away token comes back a second later", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const second = await rotate(sandbox, first.refresh_token);
    sandbox.clock.advance(1);
    expect(await (await refresh(sandbox, first.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
    expect((await getUser(sandbox, second.access_token)).status).toBe(401);
    expect(sandbox.events().at(-1)).toMatchObject({ detail: "refresh_token_reused" });
  });
});

describe("rotation grace of 30 seconds", () => {
  const graceSandbox = () => testSandbox({ rotationGraceSeconds: 30 });

  it("answers the rotated-away token within the grace with the same successor refresh token and a new access token", async () => {
    const sandbox = graceSandbox();
    const first = await signIn(sandbox);
    const second = await rotate(sandbox, first.refresh_token);
    sandbox.clock.advance(29);
    const again = await rotate(sandbox, first.refresh_token);
    expect(again.refresh_token).toBe(second.refresh_token);
    expect(again.access_token).not.toBe(second.access_token);
    expect(again.expires_in).toBe(900);
    expect((await getUser(sandbox, again.access_token)).status).toBe(200);
    expect((await getUser(sandbox, second.access_token)).status).toBe(200);
    expect(sandbox.events().at(-1)).toMatchObject({ outcome: "ok", detail: "rotation_grace" });
    // The successor still rotates normally afterwards.
    const third = await rotate(sandbox, second.refresh_token);
    expect(third.refresh_token).not.toBe(second.refresh_token);
  });

  it("revokes the family when the rotated-away token comes back after the grace", async () => {
    const sandbox = graceSandbox();
    const first = await signIn(sandbox);
    const second = await rotate(sandbox, first.refresh_token);
    sandbox.clock.advance(30);
    expect(await (await refresh(sandbox, first.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
    expect((await getUser(sandbox, second.access_token)).status).toBe(401);
    expect((await refresh(sandbox, second.refresh_token)).status).toBe(400);
  });

  it("revokes the family when the successor was already used: the chain moved on, so the replay is reuse", async () => {
    const sandbox = graceSandbox();
    const first = await signIn(sandbox);
    const second = await rotate(sandbox, first.refresh_token);
    const third = await rotate(sandbox, second.refresh_token);
    expect(await (await refresh(sandbox, first.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
    expect((await getUser(sandbox, third.access_token)).status).toBe(401);
  });

  it("does not revive a revoked family", async () => {
    const sandbox = graceSandbox();
    const first = await signIn(sandbox);
    const second = await rotate(sandbox, first.refresh_token);
    await sandbox.app.request("/oauth/revoke", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: second.refresh_token, client_id: "demo" }),
    });
    expect(await (await refresh(sandbox, first.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
  });

  it("lets two replicas racing with one refresh token both keep the session", async () => {
    const sandbox = graceSandbox();
    const first = await signIn(sandbox);
    const [a, b] = await Promise.all([rotate(sandbox, first.refresh_token), rotate(sandbox, first.refresh_token)]);
    expect(a.refresh_token).toBe(b.refresh_token);
    expect((await refresh(sandbox, a.refresh_token)).status).toBe(200);
  });

  it("refuses a grace outside 0 to an hour", () => {
    expect(() => createSandbox({ rotationGraceSeconds: -1 })).toThrow(RangeError);
    expect(() => createSandbox({ rotationGraceSeconds: 1.5 })).toThrow(RangeError);
    expect(() => createSandbox({ rotationGraceSeconds: MAX_ROTATION_GRACE_SECONDS + 1 })).toThrow(RangeError);
  });
});
