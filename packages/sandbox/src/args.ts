/**
 * Command-line arguments of `tenant-sandbox`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { MAX_ROTATION_GRACE_SECONDS } from "./tokens.js";
import { ClientConfigError, parseClientSpec, type ClientRegistration } from "./clients.js";
import { HostConfigError, normalizeHostname } from "./hosts.js";
import { FaultConfigError, parseFaultSpec, type FaultSpec } from "./faults.js";
import { MAX_USERS } from "./users.js";

/** Arguments that cannot be used; the CLI prints the message and exits with code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly code = "usage";
}

/** What the command line asks for. */
export type Command =
  | { readonly kind: "help" }
  | { readonly kind: "version" }
  | {
      readonly kind: "run";
      readonly port?: number;
      readonly host?: string;
      readonly clients: readonly ClientRegistration[];
      readonly configPath?: string;
      readonly autoApprove?: boolean;
      readonly testClock?: boolean;
      readonly stateFile?: string;
      readonly rotationGraceSeconds?: number;
      readonly allowedHosts?: readonly string[];
      readonly faults?: readonly FaultSpec[];
      readonly users?: number;
      readonly json: boolean;
    };

/** The `--help` text. */
export const HELP = `tenant-sandbox: a local tenant of the Tenant Integration Service, in memory or in a --state-file

Usage:
  tenant-sandbox --client id=<client_id>,redirect=<uri>[|<uri>...][,scopes=<scope>|<scope>...][,native] [options]
  tenant-sandbox --config sandbox.json [options]

Options:
  --port <n>          TCP port to listen on (default 4020; 0 picks a free port)
  --host <host>       interface to listen on (default 127.0.0.1)
  --client <spec>     register an OAuth client; repeat for several clients. Keys, comma-separated:
                        id=<client_id>        required
                        redirect=<uri>        required; several URIs joined by | or the key repeated;
                                              matched exactly (no commas inside a URI: use --config)
                        scopes=<s>|<s>...     optional allow-list of scopes the client may ask for
                        native                optional, off by default: a redirect URI on http://127.0.0.1
                                              or http://[::1] without a port accepts any port
                                              (RFC 8252 §7.3). The service is not known to behave
                                              so: its description requires an exact match, so
                                              integrations register a fixed loopback port
  --config <file>     read a JSON config file (fields: port, host, autoApprove, testClock, clients,
                      users, defaultScopes, stateFile, rotationGraceSeconds, allowedHosts); flags
                      given as well override it, --client and --allowed-host add to it
  --users <n>         how many users can sign in (default 3: ids 42, 43, 44; at most 10000; ids
                      count up from 42). The consent page lets the person pick one; with
                      --auto-approve the first, or the one the authorization request names with
                      the sandbox-only parameter sandbox_user=<id>
  --auto-approve      approve every valid authorization request at once (302 with a code) instead of
                      showing the consent page; for automated tests
  --test-clock        add the test routes: POST /__sandbox/clock {"advanceSeconds": n},
                      GET/DELETE /__sandbox/events, GET/DELETE /__sandbox/ledger,
                      GET/DELETE /__sandbox/requests, POST/GET/DELETE /__sandbox/faults,
                      GET /__sandbox/users
  --state-file <path> keep clients, codes, tokens and the test clock in this JSON file (mode 0600,
                      written atomically), so a restart keeps every sign-in; without it the
                      sandbox keeps everything in memory only
  --rotation-grace <seconds>
                      for this long after a refresh, the rotated-away refresh token presented
                      again gets the same new refresh token (and a new access token) instead of
                      revoking the sign-in, while that new token is unused (default 0: strict;
                      at most 3600)
  --allowed-host <name>
                      also answer requests for this host name (repeat for several); loopback
                      names and the --host are always answered, any other Host gets 421
  --fault <spec>      inject a fault into the next requests of a route, for tests; repeat for
                      several. Keys, comma-separated: route=<path> (required; /api/v1/* for a path
                      and all under it), kind=status|slow|drop|lose (required), method=<GET|POST...>,
                      status=<400-599> (default 503), retryAfter=<seconds>, delayMs=<ms> (slow),
                      count=<n> (default 1). With --test-clock, POST /__sandbox/faults adds more
  --json              print the startup information as one JSON line instead of text
  -h, --help          show this help
  -v, --version       show the version

Examples:
  tenant-sandbox --port 4020 --client id=demo,redirect=http://localhost:5173/callback
  tenant-sandbox --port 0 --auto-approve --test-clock \\
    --client 'id=ci,redirect=http://127.0.0.1:8080/callback|http://localhost:8080/callback,scopes=profile:read'
  tenant-sandbox --client id=cli,redirect=http://127.0.0.1:53682/callback
  tenant-sandbox --state-file .sandbox/state.json --rotation-grace 30 --client id=demo,redirect=http://localhost:5173/callback

Exit codes: 0 after SIGINT/SIGTERM, 1 when the server cannot start (port taken, state file unreadable,
corrupt or not writable), 2 on bad arguments or config.
`;

/**
 * Parses the arguments (without `node` and the script).
 *
 * @throws UsageError on an unknown flag, a missing value, a bad port or a bad client spec.
 * @example parseCommand(["--port", "0", "--client", "id=demo,redirect=http://127.0.0.1:8080/cb"])
 * @see RFC 6749 §2 (client registration, which --client stands in for)
 */
export function parseCommand(argv: readonly string[]): Command {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        client: { type: "string", multiple: true },
        config: { type: "string" },
        "auto-approve": { type: "boolean" },
        "test-clock": { type: "boolean" },
        "state-file": { type: "string" },
        "rotation-grace": { type: "string" },
        "allowed-host": { type: "string", multiple: true },
        fault: { type: "string", multiple: true },
        users: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help === true) return { kind: "help" };
  if (values.version === true) return { kind: "version" };
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) {
      throw new UsageError(`--port must be an integer from 0 to 65535, not "${values.port}"`);
    }
    port = Number(values.port);
  }
  if (values.host !== undefined && values.host.trim() === "") throw new UsageError("--host must not be empty");
  if (values["state-file"] !== undefined && values["state-file"] === "")
    throw new UsageError("--state-file must not be empty");
  let rotationGraceSeconds: number | undefined;
  const grace = values["rotation-grace"];
  if (grace !== undefined) {
    if (!/^\d{1,4}$/.test(grace) || Number(grace) > MAX_ROTATION_GRACE_SECONDS) {
      throw new UsageError(
        `--rotation-grace must be a whole number of seconds from 0 to ${MAX_ROTATION_GRACE_SECONDS}, not "${grace}"`,
      );
    }
    rotationGraceSeconds = Number(grace);
  }
  let users: number | undefined;
  if (values.users !== undefined) {
    if (!/^\d{1,5}$/.test(values.users) || Number(values.users) < 1 || Number(values.users) > MAX_USERS) {
      throw new UsageError(`--users must be a whole number from 1 to ${MAX_USERS}, not "${values.users}"`);
    }
    users = Number(values.users);
  }
  const allowedHosts = (values["allowed-host"] ?? []).map((name) => {
    try {
      return normalizeHostname(name);
    } catch (error) {
      if (error instanceof HostConfigError) throw new UsageError(`--allowed-host: ${error.message}`);
      throw error;
    }
  });
  const faults = (values.fault ?? []).map((spec) => {
    try {
      return parseFaultSpec(spec);
    } catch (error) {
      if (error instanceof FaultConfigError) throw new UsageError(`--fault ${spec}: ${error.message}`);
      throw error;
    }
  });
  const clients = (values.client ?? []).map((spec) => {
    try {
      return parseClientSpec(spec);
    } catch (error) {
      if (error instanceof ClientConfigError) throw new UsageError(`--client ${spec}: ${error.message}`);
      throw error;
    }
  });
  const ids = new Set<string>();
  for (const client of clients) {
    if (ids.has(client.id)) throw new UsageError(`--client: the id "${client.id}" is given twice`);
    ids.add(client.id);
  }
  return {
    kind: "run",
    clients,
    json: values.json === true,
    ...(values["state-file"] === undefined ? {} : { stateFile: values["state-file"] }),
    ...(rotationGraceSeconds === undefined ? {} : { rotationGraceSeconds }),
    ...(allowedHosts.length === 0 ? {} : { allowedHosts }),
    ...(faults.length === 0 ? {} : { faults }),
    ...(users === undefined ? {} : { users }),
    ...(port === undefined ? {} : { port }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(values.config === undefined ? {} : { configPath: values.config }),
    ...(values["auto-approve"] === true ? { autoApprove: true } : {}),
    ...(values["test-clock"] === true ? { testClock: true } : {}),
  };
}
