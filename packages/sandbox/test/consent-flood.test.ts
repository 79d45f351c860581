import { describe, expect, it } from "vitest";
import { MAX_PENDING_PER_CLIENT } from "../src/pending.js";
import {
  authorizeQuery,
  CLIENT_ID,
  LIMITED_CLIENT_ID,
  locationParams,
  pkce,
  postForm,
  postJson,
  REDIRECT_URI,
  testSandbox,
} from "./helpers.js";

function requestIdOf(html: string): string {
  const id = /name="request_id" value="([^"]+)"/.exec(html)?.[1];
  if (id === undefined) throw new Error("no request id on the consent page");
  return id;
}

// Issue 12, point 3: at the cap, the oldest pending consent was dropped, so 10,000 anonymous
// authorize requests cancelled a real user's sign-in.
describe("a flood of anonymous authorization requests", () => {
  it("leaves a user's open consent page working, and the user's sign-in completes", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { verifier, challenge } = pkce();
    const page = await sandbox.app.request(authorizeQuery({ state: "real-user" }, challenge));
    const requestId = requestIdOf(await page.text());

    const answers = new Map<number, number>();
    for (let index = 0; index < 10_000; index += 1) {
      const response = await sandbox.app.request(authorizeQuery({ state: `flood-${index}` }));
      answers.set(response.status, (answers.get(response.status) ?? 0) + 1);
    }
    // The client's share fills up, and what comes after is refused, not stored over older ones.
    expect(answers.get(200)).toBe(MAX_PENDING_PER_CLIENT - 1);
    expect(answers.get(302)).toBe(10_000 - (MAX_PENDING_PER_CLIENT - 1));
    expect(sandbox.stats().pendingRequests).toBe(MAX_PENDING_PER_CLIENT);

    const approved = await postForm(sandbox, "/__sandbox/consent", { request_id: requestId, decision: "approve" });
    expect(approved.status).toBe(302);
    const params = locationParams(approved);
    expect(params.get("state")).toBe("real-user");
    const token = await postJson(sandbox, "/oauth/token", {
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code: params.get("code"),
      code_verifier: verifier,
    });
    expect(token.status).toBe(200);
  });

  it("refuses a request over the client's share with temporarily_unavailable and the state, and serves other clients", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    for (let index = 0; index < MAX_PENDING_PER_CLIENT; index += 1) await sandbox.app.request(authorizeQuery());
    const refused = await sandbox.app.request(authorizeQuery({ state: "late" }));
    expect(refused.status).toBe(302);
    expect(Object.fromEntries(locationParams(refused))).toMatchObject({
      error: "temporarily_unavailable",
      state: "late",
    });

    const other = await sandbox.app.request(authorizeQuery({ client_id: LIMITED_CLIENT_ID, scope: "tickets:read" }));
    expect(other.status).toBe(200);
  });

  it("takes new requests again once the flooded consent pages expire", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    for (let index = 0; index < MAX_PENDING_PER_CLIENT; index += 1) await sandbox.app.request(authorizeQuery());
    expect((await sandbox.app.request(authorizeQuery())).status).toBe(302);
    sandbox.clock.advance(10 * 60);
    expect((await sandbox.app.request(authorizeQuery())).status).toBe(200);
  });
});
