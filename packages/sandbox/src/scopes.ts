/**
 * Parsing and checking of `scope` values.
 *
 * @module
 */
import { scopes as knownScopes } from "@tenant-integration/types";
import type { ClientRegistration } from "./clients.js";

const SCOPE_PATTERN = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/;
const known: ReadonlySet<string> = new Set(knownScopes);

/** The outcome of checking a requested scope. */
export type ScopeCheck =
  | { readonly ok: true; readonly scopes: readonly string[] }
  | { readonly ok: false; readonly description: string };

/**
 * Splits a space-separated scope value into unique names, checking its grammar, that every name
 * is a scope of the service, and that the client may ask for it.
 *
 * @example checkScope("profile:read tickets:read", client)
 * @see RFC 6749 §3.3 (scope = scope-token *( SP scope-token ))
 */
export function checkScope(value: string, client: ClientRegistration): ScopeCheck {
  if (!SCOPE_PATTERN.test(value)) {
    return { ok: false, description: "scope must be scope names separated by single spaces." };
  }
  const names = [...new Set(value.split(" "))];
  for (const name of names) {
    if (!known.has(name)) return { ok: false, description: `Unknown scope ${name.slice(0, 64)}.` };
    if (client.scopes !== undefined && !client.scopes.includes(name)) {
      return { ok: false, description: `The client may not ask for the scope ${name}.` };
    }
  }
  return { ok: true, scopes: names };
}
