/**
 * One challenge of a `WWW-Authenticate` header: its scheme (as sent), its parameters (names in
 * lower case, values unquoted) and, for schemes that use one, a token68 instead of parameters.
 */
export interface AuthChallenge {
  /** The auth scheme as sent, e.g. `Bearer`. Compare it case-insensitively. */
  readonly scheme: string;
  /** The auth-params, with lower-cased names and unquoted, unescaped values. A repeated name keeps its first value. */
  readonly params: Readonly<Record<string, string>>;
  /** The token68 form of the credentials, when the challenge used it instead of params. */
  readonly token68?: string;
}

/** The attributes of a `Bearer` challenge that RFC 6750 §3 defines. */
export interface BearerChallenge {
  /** The `realm` attribute. */
  readonly realm?: string;
  /** The `error` code: `invalid_request`, `invalid_token` or `insufficient_scope` (RFC 6750 §3.1). */
  readonly error?: string;
  /** The `error_description` attribute. */
  readonly errorDescription?: string;
  /** The `error_uri` attribute. */
  readonly errorUri?: string;
  /** The scope names of the `scope` attribute, split on spaces; empty when absent. */
  readonly scope: readonly string[];
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68_CHAR = /[A-Za-z0-9\-._~+/]/;

/**
 * Parses a `WWW-Authenticate` header value into its challenges, following the grammar of
 * RFC 9110 §11.6.1: several comma-separated challenges, each a scheme followed by either a token68
 * or comma-separated `name=value` params whose values are tokens or quoted strings (with `\`
 * escapes, and commas allowed inside quotes). Scheme and parameter names are case-insensitive;
 * whitespace around `=` and empty list elements are tolerated. Malformed input never throws: the
 * parser keeps what it could read.
 *
 * @param header - the header value, e.g. `Bearer realm="api", error="insufficient_scope", scope="profile:read"`
 * @returns the challenges in order; empty for an empty or unreadable header
 * @example
 * ```ts
 * parseWwwAuthenticate('Basic realm="x", Bearer error="insufficient_scope", scope="a b"');
 * // [{ scheme: "Basic", params: { realm: "x" } },
 * //  { scheme: "Bearer", params: { error: "insufficient_scope", scope: "a b" } }]
 * ```
 * @see RFC 9110 §11.6.1 (WWW-Authenticate), §11.2 (challenge grammar), §5.6.4 (quoted-string)
 */
export function parseWwwAuthenticate(header: string): AuthChallenge[] {
  const s = header;
  const n = s.length;
  let i = 0;
  const challenges: AuthChallenge[] = [];

  const skipWs = (): void => {
    while (i < n && (s[i] === " " || s[i] === "\t")) i++;
  };
  const skipWsAndCommas = (): void => {
    while (i < n && (s[i] === " " || s[i] === "\t" || s[i] === ",")) i++;
  };
  const readToken = (): string => {
    const start = i;
    while (i < n && TCHAR.test(s[i] as string)) i++;
    return s.slice(start, i);
  };
  // an unquoted value: a token by the grammar, but be lenient and read up to a comma or whitespace
  const readBareValue = (): string => {
    const start = i;
    while (i < n && s[i] !== "," && s[i] !== " " && s[i] !== "\t" && s[i] !== '"') i++;
    return s.slice(start, i);
  };
  const readQuoted = (): string => {
    // s[i] === '"'
    i++;
    let out = "";
    while (i < n) {
      const c = s[i] as string;
      if (c === "\\" && i + 1 < n) {
        out += s[i + 1];
        i += 2;
      } else if (c === '"') {
        i++;
        return out;
      } else {
        out += c;
        i++;
      }
    }
    return out; // unterminated: keep what was read
  };

  while (i < n) {
    skipWsAndCommas();
    if (i >= n) break;
    const scheme = readToken();
    if (scheme === "") {
      i++; // an unexpected character: skip it and resynchronize
      continue;
    }
    const params: Record<string, string> = {};
    let token68: string | undefined;
    skipWs();

    // token68: chars then optional "=" padding, followed by end or comma
    const t68Start = i;
    while (i < n && TOKEN68_CHAR.test(s[i] as string)) i++;
    if (i > t68Start) {
      let j = i;
      while (j < n && s[j] === "=") j++;
      let k = j;
      while (k < n && (s[k] === " " || s[k] === "\t")) k++;
      if (k >= n || s[k] === ",") {
        // "Bearer abc==" or "Newauth abc": a token68, not a param
        token68 = s.slice(t68Start, j);
        i = k;
      } else {
        i = t68Start;
      }
    }

    if (token68 === undefined) {
      // auth-params until a token that is not followed by "=" (the start of the next challenge)
      for (;;) {
        skipWsAndCommas();
        if (i >= n) break;
        const save = i;
        const name = readToken();
        if (name === "") {
          i++;
          continue;
        }
        skipWs();
        if (s[i] !== "=") {
          i = save; // a new challenge begins here
          break;
        }
        i++;
        skipWs();
        const value = s[i] === '"' ? readQuoted() : readBareValue();
        const key = name.toLowerCase();
        if (!(key in params)) params[key] = value;
        skipWs();
        if (i < n && s[i] !== ",") {
          // garbage after a value: skip to the next comma
          while (i < n && s[i] !== ",") i++;
        }
      }
    }
    challenges.push(token68 === undefined ? { scheme, params } : { scheme, params, token68 });
  }
  return challenges;
}

/**
 * Finds the `Bearer` challenge (scheme compared case-insensitively) in a `WWW-Authenticate` header
 * and returns its RFC 6750 attributes, with `scope` split into names.
 *
 * @param header - the header value, or `null` when the response had none
 * @returns the bearer challenge, or `undefined` when there is none
 * @example
 * ```ts
 * parseBearerChallenge('bearer error="insufficient_scope", scope="profile:read users:read"')?.scope;
 * // ["profile:read", "users:read"]
 * ```
 * @see RFC 6750 §3 (the challenge and its attributes), §3.1 (error codes)
 */
export function parseBearerChallenge(header: string | null): BearerChallenge | undefined {
  if (!header) return undefined;
  const challenge = parseWwwAuthenticate(header).find((c) => c.scheme.toLowerCase() === "bearer");
  if (!challenge) return undefined;
  const p = challenge.params;
  const scope = p["scope"]?.split(/[ \t]+/).filter((x) => x !== "") ?? [];
  return {
    ...(p["realm"] !== undefined ? { realm: p["realm"] } : {}),
    ...(p["error"] !== undefined ? { error: p["error"] } : {}),
    ...(p["error_description"] !== undefined ? { errorDescription: p["error_description"] } : {}),
    ...(p["error_uri"] !== undefined ? { errorUri: p["error_uri"] } : {}),
    scope,
  };
}
