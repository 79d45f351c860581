/**
 * The command line of `tenant`: one command and its flags.
 */
import { parseArgs } from "node:util";

export const HELP = `tenant: sign in to a Tenant Integration Service tenant from the command line

Usage:
  tenant login  [--tenant URL] [--client-id ID] [--scopes "profile:read ..."] [--port N] [--no-open] [--timeout SECONDS]
  tenant whoami [--tenant URL] [--client-id ID] [--json]
  tenant logout [--tenant URL] [--client-id ID]

Commands:
  login    Signs in in your browser (OAuth 2.0 Authorization Code + PKCE) and stores the tokens.
           The browser returns to http://127.0.0.1:<port>/callback, port 53682 unless --port says
           otherwise. The tenant matches redirect URIs exactly: register that URI, port included
           (tenant-sandbox: --client id=demo-cli,redirect=http://127.0.0.1:53682/callback).
  whoami   Prints the signed-in user, refreshing the access token first when it is about to expire.
  logout   Revokes the token at the tenant and removes the stored tokens.

Options:
  --tenant URL         the tenant (default: $TENANT_URL, else the tenant of the last login, else http://127.0.0.1:4020)
  --client-id ID       the OAuth client (default: $TENANT_CLIENT_ID, else the client of the last login, else demo-cli)
  --scopes "A B"       scopes to ask for at login, space-separated (default "profile:read")
  --port N             login: the loopback port of the registered redirect URI (default: $TENANT_REDIRECT_PORT, else 53682)
  --no-open            print the sign-in URL instead of opening the browser
  --timeout SECONDS    how long login waits for the browser (default 300)
  --json               whoami: print the user as JSON
  -h, --help           show this help

Tokens are stored with mode 0600 in $TENANT_CONFIG_DIR (default ~/.config/tenant-integration),
one file per tenant host and client: <host>-<client>.json.

Exit codes: 0 success, 1 failure, 2 bad usage.
`;

/** A command line that cannot be understood: exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export type Command =
  | { kind: "help" }
  | {
      kind: "login" | "whoami" | "logout";
      tenant?: string;
      clientId?: string;
      scopes: string[];
      /** The loopback port of the registered redirect URI (login only). */
      port?: number;
      open: boolean;
      timeoutSeconds: number;
      json: boolean;
    };

/**
 * Parses `argv` (without `node` and the script).
 *
 * @throws {@link UsageError} on an unknown command or flag, a missing value, or a flag the command does not take.
 * @example parseCommand(["login", "--no-open", "--tenant", "http://127.0.0.1:4020"])
 */
export function parseCommand(argv: readonly string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        tenant: { type: "string" },
        "client-id": { type: "string" },
        scopes: { type: "string" },
        port: { type: "string" },
        "no-open": { type: "boolean" },
        timeout: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help === true || positionals.length === 0 || positionals[0] === "help") return { kind: "help" };
  const [name, ...rest] = positionals;
  if (name !== "login" && name !== "whoami" && name !== "logout")
    throw new UsageError(`unknown command "${name}" (commands: login, whoami, logout)`);
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const loginOnly = (["scopes", "port", "no-open", "timeout"] as const).filter((flag) => values[flag] !== undefined);
  if (name !== "login" && loginOnly.length > 0) throw new UsageError(`--${loginOnly[0]} is an option of login only`);
  if (name !== "whoami" && values.json !== undefined) throw new UsageError("--json is an option of whoami only");

  const scopes = (values.scopes ?? "profile:read").split(/\s+/).filter((scope) => scope !== "");
  if (scopes.length === 0) throw new UsageError("--scopes needs at least one scope");
  const timeoutSeconds = values.timeout === undefined ? 300 : Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    throw new UsageError("--timeout must be a positive number of seconds");
  if (values.tenant !== undefined && !URL.canParse(values.tenant))
    throw new UsageError(`--tenant "${values.tenant}" is not a URL`);
  if (values["client-id"] === "") throw new UsageError("--client-id must not be empty");
  const port = values.port === undefined ? undefined : parsePort(values.port, "--port");

  return {
    kind: name,
    ...(values.tenant === undefined ? {} : { tenant: values.tenant }),
    ...(values["client-id"] === undefined ? {} : { clientId: values["client-id"] }),
    scopes,
    ...(port === undefined ? {} : { port }),
    open: values["no-open"] !== true,
    timeoutSeconds,
    json: values.json === true,
  };
}

/**
 * Reads a TCP port number (1 to 65535) given as `source` (a flag or an environment variable).
 *
 * @throws {@link UsageError} when the text is not such a number.
 * @example parsePort("53682", "--port") // 53682
 */
export function parsePort(text: string, source: string): number {
  const port = Number(text);
  if (!/^[0-9]+$/.test(text) || port < 1 || port > 65535)
    throw new UsageError(`${source} must be a port number from 1 to 65535`);
  return port;
}
