/**
 * A sandbox with several users: each sign-in is approved as one of them (chosen on the consent page,
 * or by the sandbox-only `sandbox_user` parameter), and every token answers `GET /api/v1/auth/user`
 * with its own user, through refreshes and restarts. The event log and the ledger say whose grant
 * each call and family was, so an integrator can test that each of their users sees only their own
 * account.
 */
import { describe, expect, it } from "vitest";
import {
  createSandbox,
  DEMO_USER,
  DEMO_USERS,
  demoUsers,
  MAX_USERS,
  USER_PARAMETER,
  UserConfigError,
  type UserRecord,
} from "../src/index.js";
import { buildSandbox } from "../src/app.js";
import { parseSnapshot } from "../src/snapshot.js";
import {
  authorizeQuery,
  CLIENT_ID,
  getUser,
  locationParams,
  pkce,
  postForm,
  postJson,
  REDIRECT_URI,
  refresh,
  signIn,
  testSandbox,
  type TokenBody,
} from "./helpers.js";

const userOf = async (sandbox: ReturnType<typeof testSandbox>, accessToken: string): Promise<unknown> => {
  const response = await getUser(sandbox, accessToken);
  expect(response.status).toBe(200);
  return response.json();
};

/** The consent page of a request (auto-approve off), its request id, and its PKCE verifier. */
async function consentPage(
  sandbox: ReturnType<typeof testSandbox>,
  overrides: Record<string, string> = {},
): Promise<{ html: string; requestId: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const html = await (await sandbox.app.request(authorizeQuery(overrides, challenge))).text();
  const requestId = /name="request_id" value="([^"]+)"/.exec(html)?.[1];
  if (requestId === undefined) throw new Error("no request id on the consent page");
  return { html, requestId, verifier };
}

/** Exchanges the code of an approval redirect. */
async function exchange(sandbox: ReturnType<typeof testSandbox>, answer: Response, verifier: string) {
  const code = locationParams(answer).get("code") ?? "";
  const response = await postJson(sandbox, "/oauth/token", {
    grant_type: "authorization_code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code,
    code_verifier: verifier,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as TokenBody;
}

describe("the sandbox's users", () => {
  it("are three by default, with distinct ids, names and e-mail addresses; the first is the demo user", () => {
    const sandbox = testSandbox();
    expect(sandbox.users).toEqual(DEMO_USERS);
    expect(sandbox.users[0]).toEqual(DEMO_USER);
    expect(DEMO_USER).toEqual({ id: 42, name: "Ada Lovelace", email: "ada@example.org", locale: "en" });
    for (const field of ["id", "name", "email"]) expect(new Set(DEMO_USERS.map((user) => user[field])).size).toBe(3);
  });

  it("can be many demo users, or the records a test gives", () => {
    expect(createSandbox({ users: 200 }).users.map((user) => user["id"])).toEqual(
      Array.from({ length: 200 }, (_, i) => 42 + i),
    );
    expect(demoUsers(4)[3]).toEqual({ id: 45, name: "Test User 45", email: "user45@example.org", locale: "en" });
    expect(demoUsers(1)).toEqual([DEMO_USER]);
    const users = [{ id: "u-1", plan: "pro" }, { id: 7 }];
    expect(createSandbox({ users }).users).toEqual(users);
  });

  it.each<[string, readonly UserRecord[] | number, RegExp]>([
    ["no user", [], /1 to 10000 user records/],
    ["a count of zero", 0, /whole number from 1 to 10000/],
    ["too many", MAX_USERS + 1, /whole number from 1 to 10000/],
    ["a record without id", [{ name: "Nobody" }], /users\[0\]\.id must be a non-empty string or a whole number/],
    ["an empty id", [{ id: "" }], /users\[0\]\.id/],
    ["a fractional id", [{ id: 4.2 }], /users\[0\]\.id/],
    ["one id twice, as a number and as text", [{ id: 42 }, { id: "42" }], /users\[1\]: the id 42 is given twice/],
  ])("refuses %s", (_name, users, message) => {
    expect(() => createSandbox({ users })).toThrow(UserConfigError);
    expect(() => createSandbox({ users })).toThrow(message);
  });
});

describe("choosing the user of a sign-in", () => {
  it("approves as the first user unless the request names another with sandbox_user", async () => {
    const sandbox = testSandbox();
    expect(await userOf(sandbox, (await signIn(sandbox)).access_token)).toEqual(DEMO_USER);
    expect(await userOf(sandbox, (await signIn(sandbox, { user: "44" })).access_token)).toEqual(DEMO_USERS[2]);
  });

  it("answers each token with its own user, whatever order the calls come in", async () => {
    const sandbox = testSandbox({ users: 5 });
    const tokens = await Promise.all(["46", "42", "44", "43", "45", "42"].map((user) => signIn(sandbox, { user })));
    const answers = await Promise.all([...tokens].reverse().map((t) => userOf(sandbox, t.access_token)));
    expect(answers.reverse().map((user) => (user as UserRecord)["id"])).toEqual([46, 42, 44, 43, 45, 42]);
  });

  it("keeps a token's user through refreshes: the rotated tokens answer as the same user", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox, { user: "43" });
    let refreshToken = first.refresh_token;
    for (let round = 0; round < 3; round++) {
      sandbox.clock.advance(901);
      const body = (await (await refresh(sandbox, refreshToken)).json()) as TokenBody;
      expect(await userOf(sandbox, body.access_token)).toEqual(DEMO_USERS[1]);
      refreshToken = body.refresh_token;
    }
  });

  it("finds a user whose id is text, and one whose id is a number, by the parameter's text", async () => {
    const sandbox = testSandbox({ users: [{ id: 7 }, { id: "auth0|64f1" }] });
    expect(await userOf(sandbox, (await signIn(sandbox, { user: "auth0|64f1" })).access_token)).toEqual({
      id: "auth0|64f1",
    });
    expect(await userOf(sandbox, (await signIn(sandbox, { user: "7" })).access_token)).toEqual({ id: 7 });
  });

  it.each([
    [
      "an unknown user",
      { [USER_PARAMETER]: "99" },
      "sandbox_user names no user of this sandbox (its users: 42, 43, 44).",
    ],
    ["an empty one", { [USER_PARAMETER]: "" }, "sandbox_user names no user of this sandbox (its users: 42, 43, 44)."],
  ])("redirects %s with invalid_request and the unchanged state", async (_name, overrides, description) => {
    const answer = await testSandbox().app.request(authorizeQuery({ state: "s-1", ...overrides }));
    expect(answer.status).toBe(302);
    expect(Object.fromEntries(locationParams(answer))).toEqual({
      error: "invalid_request",
      error_description: description,
      state: "s-1",
    });
  });

  it("refuses the parameter given twice, and names at most five users of a large sandbox", async () => {
    const twice = `${authorizeQuery({ state: "s-2" })}&${USER_PARAMETER}=42&${USER_PARAMETER}=43`;
    const answer = await testSandbox().app.request(twice);
    expect(locationParams(answer).get("error_description")).toBe("sandbox_user is given more than once.");
    const many = await testSandbox({ users: 50 }).app.request(authorizeQuery({ [USER_PARAMETER]: "x" }));
    expect(locationParams(many).get("error_description")).toBe(
      "sandbox_user names no user of this sandbox (its users: 42, 43, 44, 45, 46, ...).",
    );
  });
});

describe("the consent page", () => {
  it("lets the person pick a user: each one listed, the first selected, and approves as the one picked", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { html, requestId, verifier } = await consentPage(sandbox);
    const options = [...html.matchAll(/<option value="([^"]*)"( selected)?>([^<]*)<\/option>/g)].map(
      ([, value, selected, label]) => `${value}${selected ?? ""} ${label}`,
    );
    expect(options).toEqual([
      "42 selected Ada Lovelace (ada@example.org)",
      "43 Grace Hopper (grace@example.org)",
      "44 Émilie du Châtelet (emilie@example.org)",
    ]);
    expect(html).toContain('<label for="user">Sign in as</label> <select id="user" name="user">');
    const answer = await postForm(sandbox, "/__sandbox/consent", {
      request_id: requestId,
      user: "43",
      decision: "approve",
    });
    expect(answer.status).toBe(302);
    expect(await userOf(sandbox, (await exchange(sandbox, answer, verifier)).access_token)).toEqual(DEMO_USERS[1]);
  });

  it("selects the user sandbox_user names, and approves as that user when the form names none", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { html, requestId, verifier } = await consentPage(sandbox, { [USER_PARAMETER]: "44" });
    expect(html).toContain('<option value="44" selected>');
    expect(html).not.toContain('<option value="42" selected>');
    const answer = await postForm(sandbox, "/__sandbox/consent", { request_id: requestId, decision: "approve" });
    expect(await userOf(sandbox, (await exchange(sandbox, answer, verifier)).access_token)).toEqual(DEMO_USERS[2]);
  });

  it("refuses a user it does not have with a 400 page, and keeps the request for a corrected form", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { requestId, verifier } = await consentPage(sandbox);
    const refused = await postForm(sandbox, "/__sandbox/consent", {
      request_id: requestId,
      user: "99",
      decision: "approve",
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("user names no user of this sandbox.");
    const answer = await postForm(sandbox, "/__sandbox/consent", {
      request_id: requestId,
      user: "44",
      decision: "approve",
    });
    expect(await userOf(sandbox, (await exchange(sandbox, answer, verifier)).access_token)).toEqual(DEMO_USERS[2]);
  });

  it("escapes what a user record holds", async () => {
    const sandbox = testSandbox({ autoApprove: false, users: [{ id: '"><b>', name: "<i>x</i>", email: 5 }] });
    const { html } = await consentPage(sandbox);
    expect(html).toContain('<option value="&quot;&gt;&lt;b&gt;" selected>&lt;i&gt;x&lt;/i&gt;</option>');
  });
});

describe("the event log and the ledger", () => {
  it("say whose grant each token call, revocation and family was", async () => {
    const sandbox = testSandbox();
    const ada = await signIn(sandbox);
    const grace = await signIn(sandbox, { user: "43" });
    await refresh(sandbox, grace.refresh_token);
    await refresh(sandbox, grace.refresh_token); // reuse: revokes Grace's family
    await postForm(sandbox, "/oauth/revoke", { token: ada.access_token, client_id: CLIENT_ID });
    await refresh(sandbox, "rt_unknown");
    expect(sandbox.events().map(({ grantType, user, outcome, detail }) => [grantType, user, outcome, detail])).toEqual([
      ["authorization_code", 42, "ok", null],
      ["authorization_code", 43, "ok", null],
      ["refresh_token", 43, "ok", null],
      ["refresh_token", 43, "invalid_grant", "refresh_token_reused"],
      [null, 42, "ok", "family_revoked"],
      ["refresh_token", null, "invalid_grant", "refresh_token_unknown"],
    ]);
    expect(sandbox.ledger.list().families.map(({ user, revokedBy }) => [user, revokedBy])).toEqual([
      [42, "revocation"],
      [43, "reuse"],
    ]);
  });

  it("name the user of a family revoked by its replayed code, and of tokens issued directly", async () => {
    const sandbox = testSandbox();
    const { verifier, challenge } = pkce();
    const approved = await sandbox.app.request(authorizeQuery({ [USER_PARAMETER]: "44" }, challenge));
    const code = locationParams(approved).get("code") ?? "";
    const body = { grant_type: "authorization_code", client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, code };
    await postJson(sandbox, "/oauth/token", { ...body, code_verifier: verifier });
    await postJson(sandbox, "/oauth/token", { ...body, code_verifier: verifier });
    expect(sandbox.events().at(-1)).toMatchObject({ user: 44, detail: "code_reused" });
    const issued = sandbox.issueTokens(CLIENT_ID, ["profile:read"], 43);
    expect(issued.user).toBe(43);
    expect(await userOf(sandbox, issued.accessToken)).toEqual(DEMO_USERS[1]);
    expect(sandbox.ledger.list().families.map(({ user, revokedBy }) => [user, revokedBy])).toEqual([
      [44, "code_reuse"],
      [43, null],
    ]);
    expect(() => sandbox.issueTokens(CLIENT_ID, undefined, 99)).toThrow("The user 99 is not a user of this sandbox.");
  });
});

describe("a state file", () => {
  it("keeps each grant's user and each unused code's user across a restart", async () => {
    const { sandbox, snapshot } = buildSandbox({
      clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }],
      autoApprove: true,
    });
    const grace = sandbox.issueTokens(CLIENT_ID, ["profile:read"], 43);
    const { verifier, challenge } = pkce();
    const approved = await sandbox.app.request(
      authorizeQuery({ [USER_PARAMETER]: "44", scope: "profile:read" }, challenge),
    );
    const saved = parseSnapshot(JSON.parse(JSON.stringify(snapshot())));
    expect(saved.version).toBe(2);
    const restarted = buildSandbox(
      { clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], autoApprove: true },
      { restore: saved, onChange: () => undefined },
    ).sandbox;
    expect(await userOf(restarted, grace.accessToken)).toEqual(DEMO_USERS[1]);
    expect(await userOf(restarted, (await exchange(restarted, approved, verifier)).access_token)).toEqual(
      DEMO_USERS[2],
    );
  });

  it("gives the grants of a version 1 file (one user) to the default user, and drops those of a user no longer there", async () => {
    const { sandbox, snapshot } = buildSandbox({ clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }] });
    const ada = sandbox.issueTokens(CLIENT_ID, ["profile:read"]);
    const emilie = sandbox.issueTokens(CLIENT_ID, ["profile:read"], 44);
    const saved = JSON.parse(JSON.stringify(snapshot()));
    const versionOne = { ...saved, version: 1, tokens: { ...saved.tokens, families: [] as unknown[] } };
    versionOne.tokens.families = saved.tokens.families.map(
      ({ user: _user, ...family }: Record<string, unknown>) => family,
    );
    const fromOne = buildSandbox(
      { clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], users: [{ id: "only" }] },
      { restore: parseSnapshot(versionOne), onChange: () => undefined },
    ).sandbox;
    expect(await userOf(fromOne, emilie.accessToken)).toEqual({ id: "only" });
    const fewer = buildSandbox(
      { clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], users: 2 },
      { restore: parseSnapshot(saved), onChange: () => undefined },
    ).sandbox;
    expect(await userOf(fewer, ada.accessToken)).toEqual(DEMO_USER);
    expect((await getUser(fewer, emilie.accessToken)).status).toBe(401);
    expect((await refresh(fewer, emilie.refreshToken)).status).toBe(400);
  });
});

describe("GET /__sandbox/users", () => {
  it("lists the users with the test routes, and is absent without them", async () => {
    const response = await testSandbox().app.request("/__sandbox/users");
    expect(await response.json()).toEqual({ users: DEMO_USERS });
    expect((await testSandbox({ testClock: false }).app.request("/__sandbox/users")).status).toBe(404);
    expect((await testSandbox().app.request("/__sandbox/users", { method: "POST" })).status).toBe(405);
  });
});
