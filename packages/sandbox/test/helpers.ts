import { createHash, randomBytes } from "node:crypto";
import { createSandbox, type Sandbox, type SandboxOptions } from "../src/index.js";

export const CLIENT_ID = "demo";
export const REDIRECT_URI = "http://127.0.0.1:53682/callback";
export const OTHER_REDIRECT_URI = "http://localhost:53682/callback";
export const LIMITED_CLIENT_ID = "limited";

/** A PKCE pair per RFC 7636 §4.1 and §4.2. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

export function testSandbox(options: SandboxOptions = {}): Sandbox {
  return createSandbox({
    clients: [
      { id: CLIENT_ID, redirectUris: [REDIRECT_URI, OTHER_REDIRECT_URI] },
      { id: LIMITED_CLIENT_ID, redirectUris: [REDIRECT_URI], scopes: ["tickets:read"] },
    ],
    autoApprove: true,
    testClock: true,
    ...options,
  });
}

/** Overrides of the authorization request's parameters; undefined leaves a parameter out. */
export type AuthorizeParams = Record<string, string | undefined>;

export function authorizeQuery(overrides: AuthorizeParams = {}, challenge = pkce().challenge): string {
  const params: Record<string, string | undefined> = {
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    scope: "profile:read",
    state: "state-123",
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  return `/oauth/authorize?${query.toString()}`;
}

/** Reads the query of a redirect's Location. */
export function locationParams(response: Response): URLSearchParams {
  const location = response.headers.get("location");
  if (location === null) throw new Error(`expected a Location header, got status ${response.status}`);
  return new URL(location).searchParams;
}

export function postJson(
  sandbox: Sandbox,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(
    sandbox.app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

export function postForm(sandbox: Sandbox, path: string, body: Record<string, string>): Promise<Response> {
  return Promise.resolve(
    sandbox.app.request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body).toString(),
    }),
  );
}

/** Gets a code with auto-approve, as the sandbox's default user or as `user` (the sandbox-only `sandbox_user`). */
export async function getCode(
  sandbox: Sandbox,
  options: { scope?: string; clientId?: string; redirectUri?: string; user?: string } = {},
): Promise<{ code: string; verifier: string; redirectUri: string; clientId: string }> {
  const { verifier, challenge } = pkce();
  const redirectUri = options.redirectUri ?? REDIRECT_URI;
  const clientId = options.clientId ?? CLIENT_ID;
  const response = await sandbox.app.request(
    authorizeQuery(
      {
        scope: options.scope ?? "profile:read",
        client_id: clientId,
        redirect_uri: redirectUri,
        sandbox_user: options.user,
      },
      challenge,
    ),
  );
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}`);
  const code = locationParams(response).get("code");
  if (code === null) throw new Error("no code in the redirect");
  return { code, verifier, redirectUri, clientId };
}

export interface TokenBody {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

/** Runs the whole flow and returns the token response body. */
export async function signIn(
  sandbox: Sandbox,
  options: { scope?: string; clientId?: string; user?: string } = {},
): Promise<TokenBody> {
  const { code, verifier, redirectUri, clientId } = await getCode(sandbox, options);
  const response = await postJson(sandbox, "/oauth/token", {
    grant_type: "authorization_code",
    client_id: clientId,
    redirect_uri: redirectUri,
    code,
    code_verifier: verifier,
  });
  if (response.status !== 200) throw new Error(`token answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as TokenBody;
}

export function refresh(
  sandbox: Sandbox,
  refreshToken: string,
  extra: Record<string, unknown> = {},
): Promise<Response> {
  return postJson(sandbox, "/oauth/token", {
    grant_type: "refresh_token",
    client_id: CLIENT_ID,
    refresh_token: refreshToken,
    ...extra,
  });
}

export function getUser(sandbox: Sandbox, accessToken: string | undefined): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (accessToken !== undefined) headers["authorization"] = `Bearer ${accessToken}`;
  return Promise.resolve(sandbox.app.request("/api/v1/auth/user", { headers }));
}
