/**
 * Internal: the parameters of the `Bearer` challenge of a `WWW-Authenticate` header (names in lower
 * case, quoted values unescaped, a repeated name keeps its first value), or `undefined` when the
 * header has no Bearer challenge. Several challenges, quoted strings with commas and `\` escapes,
 * whitespace around `=` and a case-insensitive scheme are handled; malformed input never throws.
 *
 * A bare token (not followed by `=`) starts a challenge; `name=value` pairs belong to the current one.
 *
 * @see RFC 6750 §3 (the Bearer challenge), RFC 9110 §11.6.1 (WWW-Authenticate), §5.6.4 (quoted-string)
 */
export function bearerChallenge(header: string | null): Record<string, string> | undefined {
  let params: Record<string, string> | undefined;
  for (const [, name, quoted, bare] of (header ?? "").matchAll(
    /([\w!#$%&'*+.^`|~-]+)(?:[ \t]*=[ \t]*(?:"((?:[^"\\]|\\[^])*)"?|([^\s,"]*)))?/g,
  )) {
    if (quoted === undefined && bare === undefined) {
      if (params) break; // the next challenge
      if (/^bearer$/i.test(name!)) params = {};
    } else if (params) {
      params[name!.toLowerCase()] ??= quoted?.replace(/\\([^])/g, "$1") ?? bare!;
    }
  }
  return params;
}
