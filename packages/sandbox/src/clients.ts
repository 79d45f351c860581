/**
 * The OAuth clients the sandbox knows: public clients with their exact redirect URIs and an
 * optional scope allow-list.
 *
 * @module
 */
import { scopes as knownScopes } from "@tenant-integration/types";

/** One registered public client. */
export interface ClientRegistration {
  /** The `client_id`. */
  readonly id: string;
  /** The redirect URIs, compared character for character with the request's `redirect_uri`. */
  readonly redirectUris: readonly string[];
  /** The scopes this client may ask for; every scope of the service when absent. */
  readonly scopes?: readonly string[];
  /**
   * A native app (RFC 8252): a registered redirect URI `http://127.0.0.1/<path>` or
   * `http://[::1]/<path>`, without a port, also matches the same URI with any port, because the app
   * listens on a port the operating system picks (RFC 8252 §7.3). Everything else still matches
   * exactly. Off by default: the service description requires an exact match, and the service is
   * not known to accept another port, so integrations register a fixed loopback port.
   */
  readonly native?: boolean;
}

/** A client description with an invalid field. */
export class ClientConfigError extends Error {
  override readonly name = "ClientConfigError";
  readonly code = "invalid_client_config";
}

const scopeSet: ReadonlySet<string> = new Set(knownScopes);

/**
 * Checks a registration and returns a frozen copy: a non-empty id, at least one absolute redirect
 * URI without a fragment, and only scope names of the service.
 *
 * @throws ClientConfigError when a field is invalid.
 * @example validateClient({ id: "demo", redirectUris: ["http://localhost:5173/callback"] })
 * @see RFC 6749 §3.1.2 (the redirection endpoint URI is absolute and has no fragment)
 */
export function validateClient(input: ClientRegistration): ClientRegistration {
  if (typeof input.id !== "string" || input.id.length === 0) {
    throw new ClientConfigError("a client needs a non-empty id");
  }
  if (!Array.isArray(input.redirectUris) || input.redirectUris.length === 0) {
    throw new ClientConfigError(`client "${input.id}" needs at least one redirect URI`);
  }
  for (const uri of input.redirectUris) {
    if (typeof uri !== "string" || !URL.canParse(uri)) {
      throw new ClientConfigError(`client "${input.id}": redirect URI "${String(uri)}" is not an absolute URI`);
    }
    if (uri.includes("#")) {
      throw new ClientConfigError(`client "${input.id}": redirect URI "${uri}" must not have a fragment`);
    }
  }
  if (input.native !== undefined && typeof input.native !== "boolean") {
    throw new ClientConfigError(`client "${input.id}": native must be true or false`);
  }
  if (input.scopes !== undefined) {
    if (!Array.isArray(input.scopes)) {
      throw new ClientConfigError(`client "${input.id}": scopes must be a list of scope names`);
    }
    for (const scope of input.scopes) {
      if (!scopeSet.has(scope)) {
        throw new ClientConfigError(`client "${input.id}": unknown scope "${String(scope)}"`);
      }
    }
  }
  const copy: ClientRegistration = {
    id: input.id,
    redirectUris: Object.freeze([...input.redirectUris]),
    ...(input.scopes === undefined ? {} : { scopes: Object.freeze([...input.scopes]) }),
    ...(input.native === undefined ? {} : { native: input.native }),
  };
  return Object.freeze(copy);
}

/**
 * Parses the command-line form of a client: comma-separated `key=value` pairs.
 *
 * - `id=<client_id>` (required, once)
 * - `redirect=<uri>` (required; several URIs separated by `|`, or the key repeated)
 * - `scopes=<scope>|<scope>` (optional allow-list; `|`, `+` or spaces separate names)
 * - `native` (optional, no value): a native app whose loopback redirect URIs without a port accept
 *   any port (RFC 8252 §7.3)
 *
 * A value cannot contain a comma; register such URIs through a config file.
 *
 * @throws ClientConfigError on an unknown key, a missing id or redirect, or an invalid value.
 * @example parseClientSpec("id=demo,redirect=http://localhost:5173/callback|http://127.0.0.1:5173/callback")
 * @example parseClientSpec("id=cli,redirect=http://127.0.0.1/callback,native")
 * @see RFC 6749 §2 (client registration), RFC 8252 §7.3
 */
export function parseClientSpec(spec: string): ClientRegistration {
  let id: string | undefined;
  const redirectUris: string[] = [];
  let scopes: string[] | undefined;
  let native: boolean | undefined;
  for (const part of spec.split(",")) {
    if (part.trim() === "") continue;
    if (part.trim() === "native") {
      native = true;
      continue;
    }
    const equals = part.indexOf("=");
    if (equals <= 0) throw new ClientConfigError(`"${part}" is not key=value (keys: id, redirect, scopes, native)`);
    const key = part.slice(0, equals).trim();
    const value = part.slice(equals + 1).trim();
    switch (key) {
      case "id":
        if (id !== undefined) throw new ClientConfigError("id is given twice");
        id = value;
        break;
      case "redirect":
      case "redirect_uri":
        redirectUris.push(...value.split("|").filter((uri) => uri !== ""));
        break;
      case "scopes":
      case "scope":
        scopes = [...(scopes ?? []), ...value.split(/[|+ ]+/).filter((scope) => scope !== "")];
        break;
      default:
        throw new ClientConfigError(`unknown key "${key}" (keys: id, redirect, scopes, native)`);
    }
  }
  if (id === undefined) throw new ClientConfigError(`"${spec}" has no id=`);
  return validateClient({
    id,
    redirectUris,
    ...(scopes === undefined ? {} : { scopes }),
    ...(native === undefined ? {} : { native }),
  });
}

/** The loopback IP literals of RFC 8252 §7.3; `localhost` is not one of them (RFC 8252 §8.3). */
const LOOPBACK_PREFIXES = ["http://127.0.0.1", "http://[::1]"];

/**
 * Whether `requested` is `registered` with a port added after the host, and nothing else changed:
 * `http://127.0.0.1/callback` matches `http://127.0.0.1:51234/callback`. The comparison is on the
 * characters, as for exact matching, so scheme, host, path and query must be identical.
 *
 * @see RFC 8252 §7.3 ("MUST allow any port to be specified at the time of the request for loopback
 * IP redirect URIs"), §8.3 (loopback IP literals rather than `localhost`)
 */
export function matchesAnyLoopbackPort(registered: string, requested: string): boolean {
  for (const prefix of LOOPBACK_PREFIXES) {
    if (!registered.startsWith(prefix)) continue;
    const rest = registered.slice(prefix.length);
    // The registered URI must have no port: right after the host comes the path, query or the end.
    if (rest !== "" && !rest.startsWith("/") && !rest.startsWith("?")) return false;
    if (!requested.startsWith(`${prefix}:`) || !requested.endsWith(rest)) return false;
    const port = requested.slice(prefix.length + 1, requested.length - rest.length);
    return /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535;
  }
  return false;
}

/** The clients of one sandbox, by id. */
export class ClientRegistry {
  readonly #clients = new Map<string, ClientRegistration>();
  readonly #onChange: () => void;

  /** @param onChange called after every registration or removal (the state file's cue to save) */
  constructor(clients: Iterable<ClientRegistration> = [], onChange: () => void = () => undefined) {
    for (const client of clients) this.#clients.set(client.id, validateClient(client));
    this.#onChange = onChange;
  }

  /**
   * Adds a client, or replaces the one with the same id.
   *
   * @throws ClientConfigError when the registration is invalid.
   * @see RFC 6749 §2
   */
  register(client: ClientRegistration): ClientRegistration {
    const valid = validateClient(client);
    this.#clients.set(valid.id, valid);
    this.#onChange();
    return valid;
  }

  /** Removes a client; returns whether it existed. */
  unregister(id: string): boolean {
    const existed = this.#clients.delete(id);
    if (existed) this.#onChange();
    return existed;
  }

  /** The client with this id, if registered. */
  get(id: string): ClientRegistration | undefined {
    return this.#clients.get(id);
  }

  /**
   * Whether `redirectUri` is registered for the client, compared exactly; for a native client, a
   * registered loopback IP URI without a port also matches the same URI with a port.
   *
   * @see RFC 6749 §3.1.2.3, RFC 8252 §7.3
   */
  hasRedirectUri(client: ClientRegistration, redirectUri: string): boolean {
    if (client.redirectUris.includes(redirectUri)) return true;
    return (
      client.native === true &&
      client.redirectUris.some((registered) => matchesAnyLoopbackPort(registered, redirectUri))
    );
  }

  /**
   * Whether `origin` is the origin of an http(s) redirect URI of some registered client: the
   * browser origins that may call the token, revocation and API endpoints. Never `null`.
   *
   * @see https://fetch.spec.whatwg.org/#http-cors-protocol, RFC 6454 §7.3 (the "null" origin)
   */
  allowsOrigin(origin: string): boolean {
    // A non-http(s) redirect URI (a native app's private-use scheme, RFC 8252 §7.1) has the
    // opaque origin "null", which sandboxed iframes, data: URLs and file: pages all send: it must
    // never match.
    if (origin === "null") return false;
    for (const client of this.#clients.values()) {
      for (const uri of client.redirectUris) {
        const parsed = new URL(uri);
        if ((parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.origin === origin) return true;
      }
    }
    return false;
  }

  /** Every registered client. */
  list(): ClientRegistration[] {
    return [...this.#clients.values()];
  }
}
