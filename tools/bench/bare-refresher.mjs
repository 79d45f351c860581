// The tenant's own time for a server's refreshes, with no kit: one process holding the tokens of
// some sessions in memory, speaking OAuth to the sandbox over node:http with a keep-alive agent
// (sessions-fleet.mjs runs four of them as the baseline of its rows). No storage, no lock, no
// single flight, no intent, no checks beyond the status, and a client far lighter than fetch: what
// the tenant must answer at the least for the same work.
//
// Commands, one JSON line each on stdin, answered by one JSON line on stdout:
// - {"cmd":"sign-in","users":["42",…]}: signs one session in per user (the authorize request
//   approved at once by the sandbox as that user, the code exchanged with its PKCE verifier);
//   answers {"ok":true,"sessions":n}.
// - {"cmd":"refresh","reads":4}: refreshes every session's tokens (rotated: the new refresh token
//   kept), then reads GET /api/v1/auth/user `reads` times with each new access token, at most
//   AT_ONCE sessions in flight; answers {"ok":true,"refreshed":n}.
// A failed request answers {"ok":false,"error":"…"} (never a token).
//
// Config: env BARE_REFRESHER = {"tenant","clientId","redirectUri","scope"}.
import { createHash, randomBytes } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { createInterface } from "node:readline";

/** Sessions in flight at once, as the Go conformance actor serves them (sessionsAtOnce). */
const AT_ONCE = 64;
/**
 * Connections to the tenant, as the Go actor bounds them (connectionsPerTenant): a few hundred
 * opened at one instant overflow the sandbox's accept queue, and the resets are no measure.
 */
const CONNECTIONS = 32;
const config = JSON.parse(process.env.BARE_REFRESHER ?? "{}");
/**
 * CONNECTIONS connections, kept open between the requests of a command. Each command
 * starts on new connections: the sandbox closes an idle one after 5 s (Node's keep-alive timeout),
 * and a request sent on one it is closing would hang up.
 */
let agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });

/** One request: its status, Location header and body text. */
function send(url, { method = "GET", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode, location: response.headers.location, text }));
      response.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
/** The sessions: their user and tokens. */
let sessions = [];

const base64url = (bytes) => Buffer.from(bytes).toString("base64url");

/** Runs `task` for each of `items`, at most AT_ONCE at once. */
async function each(items, task) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, items.length) }, worker));
}

/** POST /oauth/token with `body`; the token response, or an error naming the status. */
async function token(body) {
  const text = JSON.stringify({ client_id: config.clientId, ...body });
  const response = await send(`${config.tenant}/oauth/token`, {
    method: "POST",
    headers: {
      accept: "application/json",
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    },
    body: text,
  });
  if (response.status !== 200)
    throw new Error(`the token endpoint answered ${response.status} to a ${body.grant_type} grant`);
  return JSON.parse(response.text);
}

/** Signs one session in as `user`: authorize (approved at once), then the code exchange (RFC 6749 §4.1, RFC 7636). */
async function signIn(user) {
  const verifier = base64url(randomBytes(32));
  const state = base64url(randomBytes(16));
  const authorize = new URL(`${config.tenant}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    response_type: "code",
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    scope: config.scope,
    state,
    code_challenge: base64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
    sandbox_user: user,
  }))
    authorize.searchParams.set(name, value);
  const approved = await send(authorize);
  const location = approved.location;
  if (!location) throw new Error(`the authorize request was answered ${approved.status} without a redirect`);
  const code = new URL(location, authorize).searchParams.get("code");
  if (!code) throw new Error("the authorize redirect carries no code");
  const tokens = await token({
    grant_type: "authorization_code",
    code,
    redirect_uri: config.redirectUri,
    code_verifier: verifier,
  });
  return { user, refresh: tokens.refresh_token, access: tokens.access_token };
}

/** Refreshes one session (keeping the rotated refresh token), then reads the user `reads` times. */
async function refreshAndRead(session, reads) {
  const tokens = await token({ grant_type: "refresh_token", refresh_token: session.refresh });
  session.refresh = tokens.refresh_token ?? session.refresh;
  session.access = tokens.access_token;
  for (let i = 0; i < reads; i++) {
    const response = await send(`${config.tenant}/api/v1/auth/user`, {
      headers: { accept: "application/json", authorization: `Bearer ${session.access}` },
    });
    if (response.status !== 200) throw new Error(`GET /api/v1/auth/user answered ${response.status}`);
  }
}

async function run(command) {
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  if (command.cmd === "sign-in") {
    sessions = [];
    await each(command.users, async (user) => sessions.push(await signIn(user)));
    return { ok: true, sessions: sessions.length };
  }
  if (command.cmd === "refresh") {
    await each(sessions, (session) => refreshAndRead(session, command.reads ?? 0));
    return { ok: true, refreshed: sessions.length };
  }
  throw new Error(`no such command: ${String(command.cmd).slice(0, 40)}`);
}

for await (const line of createInterface({ input: process.stdin })) {
  let answer;
  try {
    answer = await run(JSON.parse(line));
  } catch (error) {
    answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
