#!/usr/bin/env node
// `tenant login | whoami | logout`: the token manager and the client, used from a command line.
import { createTenantClient, timeoutAfter } from "@tenant-integration/client";
import { createTokenManager, memoryStorage, type TokenManagerOptions } from "@tenant-integration/token-manager";
import { fileStorage, waitForCallback } from "@tenant-integration/token-manager/node";
import { HELP, parseCommand, parsePort, UsageError, type Command } from "./args.js";
import { openBrowser } from "./open-browser.js";
import { configDir, forgetLastLogin, readLastLogin, removeIfEmpty, tokenFile, writeLastLogin } from "./paths.js";

type RunCommand = Exclude<Command, { kind: "help" }>;

const DEFAULT_TENANT = "http://127.0.0.1:4020";
const DEFAULT_CLIENT_ID = "demo-cli";
/**
 * The loopback port of the redirect URI the CLI registers. The service matches redirect URIs
 * exactly (service description §2, §7), so the port is fixed and registered, never picked at run time.
 */
const DEFAULT_REDIRECT_PORT = 53682;

/** A failure with a message for the user and an exit code (1, or 2 for bad usage). */
class Failure extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

interface Settings {
  tenantUrl: string;
  clientId: string;
  dir: string;
  file: string;
}

/** Flags, then the environment, then the last login, then the defaults. */
async function settings(command: RunCommand, env: NodeJS.ProcessEnv): Promise<Settings> {
  const dir = configDir(env);
  const last = await readLastLogin(dir);
  const tenantUrl = command.tenant ?? (env["TENANT_URL"] || undefined) ?? last?.tenantUrl ?? DEFAULT_TENANT;
  const clientId = command.clientId ?? (env["TENANT_CLIENT_ID"] || undefined) ?? last?.clientId ?? DEFAULT_CLIENT_ID;
  return { tenantUrl, clientId, dir, file: tokenFile(dir, tenantUrl, clientId) };
}

function tokenManager(s: Settings, redirectUri: string, scopes: string[] = ["profile:read"]) {
  return createTokenManager({
    baseUrl: s.tenantUrl,
    clientId: s.clientId,
    redirectUri,
    scopes: scopes as TokenManagerOptions["scopes"],
    storage: fileStorage(s.file), // 0600; its lock makes parallel runs share one refresh
    pendingStorage: memoryStorage(), // the pending sign-in never outlives this process
  });
}

async function login(
  command: RunCommand,
  s: Settings,
  out: (line: string) => void,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const fromEnv = env["TENANT_REDIRECT_PORT"]
    ? parsePort(env["TENANT_REDIRECT_PORT"], "TENANT_REDIRECT_PORT")
    : undefined;
  // Exactly the registered redirect URI, port included: the tenant does not accept another port.
  const redirectUri = `http://127.0.0.1:${command.port ?? fromEnv ?? DEFAULT_REDIRECT_PORT}/callback`;
  const tm = tokenManager(s, redirectUri, command.scopes);
  const server = await waitForCallback(redirectUri, {
    timeoutMs: command.timeoutSeconds * 1000,
    message: "Done. You can close this window and return to the terminal.",
  }).catch((error: unknown) => {
    if ((error as { code?: unknown } | null)?.code !== "CALLBACK_PORT_IN_USE") throw error;
    throw new Failure(
      `${redirectUri} is in use by another program. Free its port, or register another port and pass --port.`,
    );
  });
  try {
    const { url } = await tm.beginAuthorization();
    // A redirect URI the tenant does not know fails here at once (REDIRECT_URI_REFUSED), not after the wait.
    await server.checkRedirect(url);
    out(`Open this URL in your browser to sign in to ${s.tenantUrl}:\n\n  ${url}\n`);
    if (command.open && (await openBrowser(url))) out("Opening your browser…");
    out(`Waiting for the browser to come back to ${redirectUri} (up to ${command.timeoutSeconds} s; Ctrl-C cancels)…`);
    await tm.completeAuthorization(await server.callback);
  } finally {
    server.close();
  }
  await writeLastLogin(s.dir, { tenantUrl: s.tenantUrl, clientId: s.clientId });
  out(`Signed in to ${s.tenantUrl} as client ${s.clientId}. Tokens saved to ${s.file} (mode 0600).`);
}

async function whoami(command: RunCommand, s: Settings, out: (line: string) => void): Promise<void> {
  const tm = tokenManager(s, "http://127.0.0.1/callback"); // no sign-in here: the redirect URI is not used
  // a command line should not hang on a silent tenant: 30 s for the call, retries included
  const client = createTenantClient({ baseUrl: s.tenantUrl, auth: tm, timeout: timeoutAfter(30_000) });
  // The token is refreshed first when it is about to expire; after a 401 (assumed: RFC 6750 §3.1), once more.
  const { data, response } = await client.GET("/api/v1/auth/user");
  if (data === undefined) {
    throw new Failure(
      response.status === 401
        ? `${s.tenantUrl} refused the token (401). Run \`tenant login\` again.`
        : `${s.tenantUrl} answered ${response.status} to GET /api/v1/auth/user.`,
    );
  }
  if (command.json) {
    out(JSON.stringify(data, null, 2));
    return;
  }
  out(`Signed in to ${s.tenantUrl} as client ${s.clientId}:`);
  for (const [key, value] of Object.entries(data))
    out(`  ${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
}

async function logout(s: Settings, out: (line: string) => void): Promise<void> {
  const tm = tokenManager(s, "http://127.0.0.1/callback");
  let revoked = false;
  tm.on("revoked", () => (revoked = true));
  try {
    await tm.revoke(); // POST /oauth/revoke, then the tokens are deleted; without a session it only clears
  } catch (error) {
    if (code(error) !== "SESSION_ENDED") throw error;
  }
  await removeIfEmpty(s.file);
  await forgetLastLogin(s.dir, s);
  out(
    revoked
      ? `Signed out of ${s.tenantUrl}: the token was revoked and the stored tokens removed.`
      : `Not signed in to ${s.tenantUrl}; nothing to revoke. Stored tokens removed.`,
  );
}

function code(error: unknown): string | undefined {
  const value = (error as { code?: unknown } | null)?.code;
  return typeof value === "string" ? value : undefined;
}

/** What went wrong, in words; token manager and client errors never contain a token. */
function explain(error: unknown, s: Settings | undefined): Failure {
  if (error instanceof Failure) return error;
  if (error instanceof UsageError) return new Failure(`${error.message}\nRun \`tenant --help\` for usage.`, 2);
  const where = s === undefined ? "the tenant" : s.tenantUrl;
  const message = error instanceof Error ? error.message : String(error);
  switch (code(error)) {
    case "NOT_SIGNED_IN":
      return new Failure(
        `Not signed in to ${where}${s === undefined ? "" : ` as client ${s.clientId}`}. Run \`tenant login\` first.`,
      );
    case "SESSION_ENDED":
      return new Failure(
        `Your session with ${where} has ended (the refresh token was refused). Run \`tenant login\` again.`,
      );
    case "INVALID_OPTIONS":
      return new Failure(`Invalid tenant or client: ${message}`, 2);
    case "INVALID_CALLBACK":
    case "CALLBACK_TIMEOUT":
      return new Failure(`The sign-in did not complete: ${message}. Run \`tenant login\` again.`);
    case "STATE_MISMATCH":
    case "STATE_MISSING":
    case "NO_PENDING_SIGN_IN":
      return new Failure(
        "The browser came back with a response that does not belong to this login; nothing was exchanged. Run `tenant login` again.",
      );
    case "AUTHORIZATION_DENIED":
      return new Failure("The sign-in was denied in the browser.");
    case "REDIRECT_URI_REFUSED":
      return new Failure(
        `${where} does not accept this redirect URI (${message}). Register it for the client, or pass the registered port with --port.`,
        2,
      );
    case "TRANSIENT":
    case "NETWORK_ERROR":
    case "TIMEOUT":
      return new Failure(`Could not reach ${where} (${message}). Check the URL and your connection, then retry.`);
    case "LOCK_TIMEOUT":
      return new Failure(`Another \`tenant\` run is still refreshing the tokens (${message}). Retry in a moment.`);
    case "STORAGE_FAILED": {
      // The cause names the token file and the fault (read-only, disk full); never a token.
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
      return new Failure(`Could not save the tokens${cause}. Fix that, then run the command again.`);
    }
    default:
      return new Failure(message);
  }
}

/**
 * Runs `tenant` with `argv` (without `node` and the script) and resolves with the exit code:
 * 0 success, 1 failure, 2 bad usage.
 */
export async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  io: { out: (line: string) => void; err: (line: string) => void } = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  },
): Promise<number> {
  let s: Settings | undefined;
  try {
    const command = parseCommand(argv);
    if (command.kind === "help") {
      io.out(HELP);
      return 0;
    }
    s = await settings(command, env);
    if (command.kind === "login") await login(command, s, io.out, env);
    else if (command.kind === "whoami") await whoami(command, s, io.out);
    else await logout(s, io.out);
    return 0;
  } catch (error) {
    const failure = explain(error, s);
    io.err(`tenant: ${failure.message}`);
    return failure.exitCode;
  }
}

process.exitCode = await main(process.argv.slice(2));
