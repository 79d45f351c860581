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
  };
  return Object.freeze(copy);
}

/**
 * Parses the command-line form of a client: comma-separated `key=value` pairs.
 *
 * - `id=<client_id>` (required, once)
 * - `redirect=<uri>` (required; several URIs separated by `|`, or the key repeated)
 * - `scopes=<scope>|<scope>` (optional allow-list; `|`, `+` or spaces separate names)
 *
 * A value cannot contain a comma; register such URIs through a config file.
 *
 * @throws ClientConfigError on an unknown key, a missing id or redirect, or an invalid value.
 * @example parseClientSpec("id=demo,redirect=http://localhost:5173/callback|http://127.0.0.1:5173/callback")
 * @see RFC 6749 §2 (client registration)
 */
export function parseClientSpec(spec: string): ClientRegistration {
  let id: string | undefined;
  const redirectUris: string[] = [];
  let scopes: string[] | undefined;
  for (const part of spec.split(",")) {
    if (part.trim() === "") continue;
    const equals = part.indexOf("=");
    if (equals <= 0) throw new ClientConfigError(`"${part}" is not key=value (keys: id, redirect, scopes)`);
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
        throw new ClientConfigError(`unknown key "${key}" (keys: id, redirect, scopes)`);
    }
  }
  if (id === undefined) throw new ClientConfigError(`"${spec}" has no id=`);
  return validateClient({ id, redirectUris, ...(scopes === undefined ? {} : { scopes }) });
}

/** The clients of one sandbox, by id. */
export class ClientRegistry {
  readonly #clients = new Map<string, ClientRegistration>();

  constructor(clients: Iterable<ClientRegistration> = []) {
    for (const client of clients) this.register(client);
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
    return valid;
  }

  /** Removes a client; returns whether it existed. */
  unregister(id: string): boolean {
    return this.#clients.delete(id);
  }

  /** The client with this id, if registered. */
  get(id: string): ClientRegistration | undefined {
    return this.#clients.get(id);
  }

  /** Whether `redirectUri` is registered for the client, compared exactly. @see RFC 6749 §3.1.2.3 */
  hasRedirectUri(client: ClientRegistration, redirectUri: string): boolean {
    return client.redirectUris.includes(redirectUri);
  }

  /**
   * Whether `origin` is the origin of a redirect URI of some registered client: the browser
   * origins that may call the token, revocation and API endpoints.
   */
  allowsOrigin(origin: string): boolean {
    for (const client of this.#clients.values()) {
      for (const uri of client.redirectUris) {
        if (new URL(uri).origin === origin) return true;
      }
    }
    return false;
  }

  /** Every registered client. */
  list(): ClientRegistration[] {
    return [...this.#clients.values()];
  }
}
