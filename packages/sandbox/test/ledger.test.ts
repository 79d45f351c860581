/**
 * The refresh-token ledger: every refresh token presented to the token endpoint, by SHA-256
 * fingerprint, with who presented it and what came of it; the reuse detections; the families and
 * what revoked them. The conformance suite checks its invariants ("no refresh token presented
 * twice", "the session is still valid at the end") from this, on the tenant's side.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { EVENT_RETENTION_SECONDS, refreshTokenFingerprint, type LedgerView, type Sandbox } from "../src/index.js";
import { CLIENT_ID, getCode, postJson, refresh, signIn, testSandbox, type TokenBody } from "./helpers.js";

const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex");

const refreshAs = (sandbox: Sandbox, refreshToken: string, actor?: string) =>
  postJson(
    sandbox,
    "/oauth/token",
    { grant_type: "refresh_token", client_id: CLIENT_ID, refresh_token: refreshToken },
    actor === undefined ? {} : { "Sandbox-Actor": actor },
  );

async function rotated(sandbox: Sandbox, refreshToken: string, actor?: string): Promise<TokenBody> {
  const response = await refreshAs(sandbox, refreshToken, actor);
  expect(response.status).toBe(200);
  return (await response.json()) as TokenBody;
}

async function ledgerOverHttp(sandbox: Sandbox): Promise<LedgerView> {
  const response = await sandbox.app.request("/__sandbox/ledger");
  expect(response.status).toBe(200);
  return (await response.json()) as LedgerView;
}

describe("the refresh-token ledger", () => {
  it("shows each rotated token presented once, the reused one twice, the reuse, and the family revoked by reuse", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const second = await rotated(sandbox, first.refresh_token, "a1");
    await rotated(sandbox, second.refresh_token, "a2");
    expect((await refreshAs(sandbox, first.refresh_token, "a3")).status).toBe(400);

    const ledger = await ledgerOverHttp(sandbox);
    const [family] = ledger.families;
    const events = sandbox.events().filter((e) => e.grantType === "refresh_token");
    expect(ledger).toEqual({
      refreshTokens: [
        {
          fingerprint: sha256Hex(first.refresh_token),
          family: family?.id,
          presentations: [
            { seq: events[0]?.seq, time: events[0]?.time, actor: "a1", outcome: "ok", detail: null },
            {
              seq: events[2]?.seq,
              time: events[2]?.time,
              actor: "a3",
              outcome: "invalid_grant",
              detail: "refresh_token_reused",
            },
          ],
        },
        {
          fingerprint: sha256Hex(second.refresh_token),
          family: family?.id,
          presentations: [{ seq: events[1]?.seq, time: events[1]?.time, actor: "a2", outcome: "ok", detail: null }],
        },
      ],
      reuses: [
        {
          fingerprint: sha256Hex(first.refresh_token),
          family: family?.id,
          seq: events[2]?.seq,
          time: events[2]?.time,
          actor: "a3",
        },
      ],
      families: [{ id: expect.stringMatching(/^fam_/), user: 42, revoked: true, revokedBy: "reuse" }],
    });
    expect(sandbox.ledger.list()).toEqual(ledger);
  });

  it("names a token by the SHA-256 of its UTF-8 bytes in lowercase hex, as the token managers' intent record does", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await rotated(sandbox, tokens.refresh_token);
    const [entry] = sandbox.ledger.list().refreshTokens;
    expect(entry?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(entry?.fingerprint).toBe(sha256Hex(tokens.refresh_token));
    expect(await refreshTokenFingerprint(tokens.refresh_token)).toBe(entry?.fingerprint);
  });

  it("never holds a token or code value", async () => {
    const sandbox = testSandbox();
    const { code, verifier, redirectUri } = await getCode(sandbox);
    const exchange = await postJson(sandbox, "/oauth/token", {
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      redirect_uri: redirectUri,
      code,
      code_verifier: verifier,
    });
    const first = (await exchange.json()) as TokenBody;
    const second = await rotated(sandbox, first.refresh_token, "a1");
    await refreshAs(sandbox, first.refresh_token, "a2");
    await refreshAs(sandbox, "rt_not-a-token-this-sandbox-issued");
    const text = JSON.stringify(sandbox.ledger.list()) + JSON.stringify(await ledgerOverHttp(sandbox));
    for (const secret of [
      first.access_token,
      first.refresh_token,
      second.access_token,
      second.refresh_token,
      code,
      verifier,
      "rt_not-a-token-this-sandbox-issued",
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it.each([
    ["a plain name", "a1", "a1"],
    ["a name with every allowed character", "tab-2.node_js:3", "tab-2.node_js:3"],
    ["spaces around the name (trimmed)", "  worker-7  ", "worker-7"],
    ["a long name (cut to 64 characters)", "x".repeat(100), "x".repeat(64)],
    ["a space inside", "a 1", null],
    ["markup", "<script>", null],
    ["an empty value", "   ", null],
    ["no header", undefined, null],
  ])("records the Sandbox-Actor header: %s", async (_name, header, actor) => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await rotated(sandbox, tokens.refresh_token, header);
    expect(sandbox.ledger.list().refreshTokens[0]?.presentations[0]?.actor).toBe(actor);
  });

  it("drops a repeated Sandbox-Actor header to null (it reads as two names joined with a comma)", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    const headers = new Headers({ "content-type": "application/json" });
    headers.append("Sandbox-Actor", "a1");
    headers.append("Sandbox-Actor", "a2");
    const body = JSON.stringify({
      grant_type: "refresh_token",
      client_id: CLIENT_ID,
      refresh_token: tokens.refresh_token,
    });
    expect((await sandbox.app.request("/oauth/token", { method: "POST", headers, body })).status).toBe(200);
    expect(sandbox.ledger.list().refreshTokens[0]?.presentations[0]?.actor).toBeNull();
  });

  it.each([
    ["answered 503 by a status fault", { kind: "status", status: 503 }],
    ["dropped by a fault", { kind: "drop" }],
  ] as const)(
    "does not count a refresh %s as a presentation: it never reached the token store",
    async (_name, fault) => {
      const sandbox = testSandbox();
      const tokens = await signIn(sandbox);
      sandbox.faults.add({ route: "/oauth/token", method: "POST", ...fault });
      const answer = refreshAs(sandbox, tokens.refresh_token, "a1");
      if (fault.kind === "drop") await expect(answer).rejects.toThrow(TypeError);
      else expect((await answer).status).toBe(503);
      expect(sandbox.ledger.list().refreshTokens).toEqual([]);
      // The same token, sent again, is presented for the first time and rotates.
      await rotated(sandbox, tokens.refresh_token, "a1");
      expect(sandbox.ledger.list().refreshTokens.map((t) => t.presentations.length)).toEqual([1]);
    },
  );

  it("lists a family at its sign-in, so a session never refreshed shows as still valid", async () => {
    const sandbox = testSandbox();
    await signIn(sandbox);
    sandbox.issueTokens(CLIENT_ID);
    expect(sandbox.ledger.list()).toEqual({
      refreshTokens: [],
      reuses: [],
      families: [
        { id: expect.stringMatching(/^fam_/), user: 42, revoked: false, revokedBy: null },
        { id: expect.stringMatching(/^fam_/), user: 42, revoked: false, revokedBy: null },
      ],
    });
  });

  it("marks a family revoked by POST /oauth/revoke, and a refresh after it as refresh_token_revoked, not reuse", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await postJson(sandbox, "/oauth/revoke", { token: tokens.access_token, client_id: CLIENT_ID });
    await refreshAs(sandbox, tokens.refresh_token, "a1");
    const ledger = sandbox.ledger.list();
    expect(ledger.families).toEqual([
      { id: expect.stringMatching(/^fam_/), user: 42, revoked: true, revokedBy: "revocation" },
    ]);
    expect(ledger.refreshTokens[0]?.presentations).toMatchObject([
      { outcome: "invalid_grant", detail: "refresh_token_revoked" },
    ]);
    expect(ledger.reuses).toEqual([]);
  });

  it("marks a family revoked by its replayed authorization code as code_reuse", async () => {
    const sandbox = testSandbox();
    const { code, verifier, redirectUri } = await getCode(sandbox);
    const exchange = {
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      redirect_uri: redirectUri,
      code,
      code_verifier: verifier,
    };
    expect((await postJson(sandbox, "/oauth/token", exchange)).status).toBe(200);
    expect((await postJson(sandbox, "/oauth/token", exchange)).status).toBe(400);
    expect(sandbox.ledger.list().families).toEqual([
      { id: expect.stringMatching(/^fam_/), user: 42, revoked: true, revokedBy: "code_reuse" },
    ]);
  });

  it("records a replay within the rotation grace as a second ok presentation (rotation_grace), not as reuse", async () => {
    const sandbox = testSandbox({ rotationGraceSeconds: 30 });
    const tokens = await signIn(sandbox);
    await rotated(sandbox, tokens.refresh_token, "a1");
    await rotated(sandbox, tokens.refresh_token, "a2");
    const ledger = sandbox.ledger.list();
    expect(ledger.refreshTokens[0]?.presentations).toMatchObject([
      { actor: "a1", outcome: "ok", detail: null },
      { actor: "a2", outcome: "ok", detail: "rotation_grace" },
    ]);
    expect(ledger.reuses).toEqual([]);
    expect(ledger.families).toMatchObject([{ revoked: false }]);
  });

  it("records a token the sandbox never issued with no family", async () => {
    const sandbox = testSandbox();
    await refreshAs(sandbox, "rt_unknown", "a1");
    expect(sandbox.ledger.list()).toEqual({
      refreshTokens: [
        {
          fingerprint: sha256Hex("rt_unknown"),
          family: null,
          presentations: [
            expect.objectContaining({ actor: "a1", outcome: "invalid_grant", detail: "refresh_token_unknown" }),
          ],
        },
      ],
      reuses: [],
      families: [],
    });
  });

  it("gives an access token sent as a refresh token no family", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await refreshAs(sandbox, tokens.access_token);
    expect(sandbox.ledger.list().refreshTokens).toEqual([
      {
        fingerprint: sha256Hex(tokens.access_token),
        family: null,
        presentations: [expect.objectContaining({ detail: "refresh_token_unknown" })],
      },
    ]);
  });

  it("records nothing for a refresh request without a refresh token", async () => {
    const sandbox = testSandbox();
    expect(
      (await postJson(sandbox, "/oauth/token", { grant_type: "refresh_token", client_id: CLIENT_ID })).status,
    ).toBe(400);
    expect(sandbox.ledger.list().refreshTokens).toEqual([]);
  });

  it("keeps what it holds for 30 days of sandbox time, as the event log does", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await refresh(sandbox, tokens.refresh_token);
    sandbox.clock.advance(EVENT_RETENTION_SECONDS - 1);
    expect(sandbox.ledger.list().refreshTokens).toHaveLength(1);
    sandbox.clock.advance(2);
    expect(sandbox.ledger.list()).toEqual({ refreshTokens: [], reuses: [], families: [] });
  });
});

describe("the ledger's test routes", () => {
  it.each(["GET", "DELETE"])("%s /__sandbox/ledger does not exist without the test clock (404)", async (method) => {
    const sandbox = testSandbox({ testClock: false });
    const response = await sandbox.app.request("/__sandbox/ledger", { method });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: "not_found" });
  });

  it("DELETE /__sandbox/ledger clears the ledger and leaves the event log", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await refresh(sandbox, tokens.refresh_token);
    const response = await sandbox.app.request("/__sandbox/ledger", { method: "DELETE" });
    expect(await response.json()).toEqual({ cleared: 2 }); // the sign-in and the refresh
    expect(await ledgerOverHttp(sandbox)).toEqual({ refreshTokens: [], reuses: [], families: [] });
    expect(sandbox.events()).toHaveLength(2);
  });

  it("clearing the event log leaves the ledger, whose seq numbers still join the events that follow", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const second = await rotated(sandbox, first.refresh_token);
    sandbox.clearEvents();
    await rotated(sandbox, second.refresh_token);
    const seqs = sandbox.ledger.list().refreshTokens.map((t) => t.presentations[0]?.seq);
    expect(seqs).toEqual([2, 3]);
    expect(sandbox.events().map((e) => e.seq)).toEqual([3]);
  });

  it("answers other methods with 405", async () => {
    const sandbox = testSandbox();
    const response = await sandbox.app.request("/__sandbox/ledger", { method: "POST" });
    expect(response.status).toBe(405);
  });
});
