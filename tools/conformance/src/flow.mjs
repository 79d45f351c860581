// The conformance flow: runtime-neutral (fetch, WebCrypto, nothing else), importing the packages by
// their published names exactly as users do. Each runtime's entry gives it a driver, which plays
// the browser at the authorize endpoint and moves the sandbox's test clock.
import {
  createPkcePair,
  createTokenManager,
  deriveCodeChallenge,
  memoryStorage,
} from "@tenant-integration/token-manager";
import { createTenantClient, staticToken } from "@tenant-integration/client";

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/**
 * Runs every conformance check in order and returns one result per check.
 *
 * @param {{ baseUrl: string, clientId: string, redirectUri: string, driver: {
 *   authorize(url: string): Promise<string>,
 *   advanceClock(seconds: number): Promise<void>,
 *   refreshCount(): Promise<number>,
 * } }} options
 * @returns {Promise<Array<{ name: string, ok: boolean, error?: string }>>}
 */
export async function runConformance({ baseUrl, clientId, redirectUri, driver }) {
  const results = [];
  const check = async (name, fn) => {
    try {
      await fn();
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: String(error && error.stack ? error.stack : error) });
    }
  };

  await check("RFC 7636 Appendix B: the verifier gives its challenge", async () => {
    const challenge = await deriveCodeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    assert(challenge === "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", `got ${challenge}`);
  });

  await check("createPkcePair gives a 43–128 character verifier whose S256 challenge it returns", async () => {
    for (const length of [43, 64, 128]) {
      const pair = await createPkcePair({ length });
      assert(pair.method === "S256", `method ${pair.method}`);
      assert(
        pair.verifier.length === length && /^[A-Za-z0-9\-._~]+$/.test(pair.verifier),
        `verifier of length ${pair.verifier.length}`,
      );
      assert(pair.challenge === (await deriveCodeChallenge(pair.verifier)), "challenge differs");
    }
  });

  await check("deriveCodeChallenge rejects a 42-character verifier with a typed error", async () => {
    let caught;
    try {
      await deriveCodeChallenge("a".repeat(42));
    } catch (error) {
      caught = error;
    }
    assert(caught instanceof Error && typeof caught.code === "string", "no typed error");
  });

  // The token manager's clock follows the sandbox's test clock.
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;
  const manager = createTokenManager({
    baseUrl,
    clientId,
    redirectUri,
    scopes: ["profile:read"],
    storage: memoryStorage(),
    now,
  });
  const client = createTenantClient({ baseUrl, auth: manager });

  await check("signs in: authorize, callback with the unchanged state, code exchange", async () => {
    const { url } = await manager.beginAuthorization();
    const authorizeUrl = new URL(url);
    assert(authorizeUrl.origin === new URL(baseUrl).origin, "authorize URL on another host");
    assert(authorizeUrl.searchParams.get("code_challenge_method") === "S256", "not S256");
    const callback = await driver.authorize(url);
    assert(new URL(callback).searchParams.get("state") === authorizeUrl.searchParams.get("state"), "state changed");
    await manager.completeAuthorization(callback);
  });

  await check("reads the user with the bearer token", async () => {
    const { data, error, response } = await client.GET("/api/v1/auth/user");
    assert(response.status === 200, `status ${response.status}`);
    assert(error === undefined && data && typeof data === "object", "no user object");
  });

  await check("refreshes transparently once the access token is 15 minutes old", async () => {
    const before = await driver.refreshCount();
    await driver.advanceClock(16 * 60);
    offsetMs += 16 * 60 * 1000;
    const { response } = await client.GET("/api/v1/auth/user");
    assert(response.status === 200, `status ${response.status}`);
    const after = await driver.refreshCount();
    assert(after === before + 1, `${after - before} refreshes`);
  });

  await check("revokes, after which the old access token gets 401", async () => {
    const token = await manager.getAccessToken();
    await manager.revoke();
    const old = createTenantClient({ baseUrl, auth: staticToken(token) });
    const { response } = await old.GET("/api/v1/auth/user");
    assert(response.status === 401, `status ${response.status}`);
  });

  return results;
}

/** The closing lines every runtime prints: one per check, then the totals. */
export function report(runtime, results) {
  const lines = results.map((r) => `${r.ok ? "✓" : "✗"} [${runtime}] ${r.name}${r.ok ? "" : `\n    ${r.error}`}`);
  const passed = results.filter((r) => r.ok).length;
  lines.push(`${passed} passed, ${results.length - passed} failed`);
  return lines.join("\n");
}
