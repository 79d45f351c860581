// The invariants of a run, checked from the tenant's side (the sandbox's ledger) and from what the
// actors said. Each check returns the failures it finds, as sentences a reader can act on.

/** The shapes of every token and code the sandbox issues (`at_`, `rt_`, `ac_` and 43 base64url characters). */
export const SECRET_SHAPE = /\b(?:at|rt|ac)_[A-Za-z0-9_-]{40,}/;

/**
 * A PKCE verifier or an OAuth state as the kits make them (RFC 7636 §4.1: 43 to 128 characters of
 * A-Z a-z 0-9 - . _ ~, from 32 random bytes or more): a run of 43 or more of those characters mixing
 * upper case, lower case and digits. Hex digests (a refresh token's SHA-256, a lock owner's id) are
 * lower case only and pass.
 */
const RANDOM_RUN = /[A-Za-z0-9._~-]{43,}/g;
const looksRandom = (run) => /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);

/** The first secret a line holds, cut so the report does not print it whole; undefined when none. */
export function secretIn(line) {
  const token = line.match(SECRET_SHAPE)?.[0];
  if (token) return token;
  return [...line.matchAll(RANDOM_RUN)].map((match) => match[0]).find(looksRandom);
}

/** Every invariant, in the order they are reported. */
export const INVARIANTS = [
  "single-redemption",
  "no-spurious-logout",
  "no-lost-rotation",
  "bounded-waits",
  "one-refresh-per-expiry",
  "no-cross-talk",
  "secrets-hygiene",
  "request-headers",
  "clean-exit",
];

/** Which invariants apply to an outcome, when the scenario does not list them. */
export function invariantsFor(run) {
  const listed = run.invariants ?? INVARIANTS;
  if (run.expect.outcome === "kept") return listed;
  // A session ended by the tenant or signed out on purpose keeps the waits bounded and the logs clean;
  // the ended one is a reuse by definition, and neither has a session left to continue.
  const apply =
    run.expect.outcome === "ended"
      ? ["bounded-waits", "secrets-hygiene", "request-headers", "clean-exit"]
      : ["single-redemption", "bounded-waits", "secrets-hygiene", "request-headers", "clean-exit"];
  return listed.filter((name) => apply.includes(name));
}

const short = (fingerprint) => `sha256:${fingerprint.slice(0, 12)}…`;

/** No refresh token presented twice across all actors (RFC 9700 §4.14.2: the tenant would revoke the family). */
export function singleRedemption(ledger) {
  return ledger.refreshTokens
    .filter((token) => token.presentations.length > 1)
    .map(
      (token) =>
        `single-redemption: refresh token ${short(token.fingerprint)} (family ${token.family}) was presented ${token.presentations.length} times: ` +
        token.presentations
          .map(
            (p) =>
              `by ${p.actor ?? "an unnamed client"} (event ${p.seq}: ${p.outcome}${p.detail ? ` ${p.detail}` : ""})`,
          )
          .join(", "),
    );
}

/** No actor saw its session end, and the tenant revoked no family, while nothing should have ended it. */
export function noSpuriousLogout(ledger, actors) {
  const failures = [];
  for (const reuse of ledger.reuses)
    failures.push(
      `no-spurious-logout: the tenant revoked family ${reuse.family} on the reuse of ${short(reuse.fingerprint)} by ${reuse.actor ?? "an unnamed client"}`,
    );
  for (const actor of actors) {
    for (const event of actor.events) {
      if (event.event === "session" && event.what === "ended")
        failures.push(
          `no-spurious-logout: ${actor.describe()} reported its session ended${event.code ? ` (${event.code})` : ""}`,
        );
    }
  }
  return failures;
}

/** Refresh grants the tenant answered ok, per expiry. */
export function refreshCount(ledger) {
  return ledger.refreshTokens.flatMap((token) => token.presentations).filter((p) => p.outcome === "ok").length;
}

/**
 * A run of many sessions (each one sign-in, so one token family of its own user): every family the
 * tenant issued was refreshed exactly once per expiry, and there is one family per session.
 */
export function refreshesPerSession(ledger, sessions, expiries) {
  const failures = [];
  const families = ledger.families ?? [];
  if (families.length !== sessions)
    failures.push(`one-refresh-per-expiry: the tenant saw ${families.length} token families for ${sessions} sessions`);
  const answered = new Map(families.map((family) => [family.id, 0]));
  for (const token of ledger.refreshTokens)
    for (const presentation of token.presentations)
      if (presentation.outcome === "ok") answered.set(token.family, (answered.get(token.family) ?? 0) + 1);
  const owners = new Map(families.map((family) => [family.id, family.user]));
  const wrong = [...answered].filter(([, count]) => count !== expiries);
  if (wrong.length > 0)
    failures.push(
      `one-refresh-per-expiry: ${wrong.length} of ${answered.size} sessions were not refreshed once per expiry (${expiries}): ${wrong
        .slice(0, 5)
        .map(([family, count]) => `user ${owners.get(family) ?? "?"} (family ${family}) ${count} times`)
        .join(", ")}`,
    );
  return failures;
}

/** Every line any actor printed holds no token or code. */
export function secretsHygiene(actors) {
  const failures = [];
  for (const actor of actors) {
    const line = actor.transcript.find((text) => secretIn(text) !== undefined);
    if (line !== undefined) {
      const secret = secretIn(line);
      failures.push(
        `secrets-hygiene: ${actor.describe()} printed a token, code, verifier or state: ${line
          .split(secret)
          .join(`${secret.slice(0, 5)}…[cut here]`)
          .slice(0, 200)}`,
      );
    }
  }
  return failures;
}

/** What the tenant saw of the run's refreshes, in order, for a failure report: "a0 ok, a2 invalid_grant refresh_token_reused". */
export function tenantSaw(ledger) {
  const presentations = ledger.refreshTokens
    .flatMap((token) => token.presentations.map((p) => ({ ...p, fingerprint: token.fingerprint })))
    .sort((a, b) => a.seq - b.seq);
  if (presentations.length === 0) return "the tenant saw no refresh";
  return `the tenant saw: ${presentations.map((p) => `${p.actor ?? "?"} presented ${short(p.fingerprint)}: ${p.outcome}${p.detail ? ` ${p.detail}` : ""}`).join("; ")}`;
}

/** Whether a header value (a list of media ranges, RFC 9110 §12.5.1) names `type`. */
const names = (value, type) =>
  (value ?? "")
    .split(",")
    .map((range) => range.split(";")[0].trim().toLowerCase())
    .includes(type);

/**
 * What every kit sends on each kind of request (decision D5; the contract's
 * `x-required-headers`): the name of the request, and a check that returns what is missing.
 */
const REQUIRED_HEADERS = [
  {
    matches: (r) => r.path.startsWith("/api/v1"),
    what: "API call",
    missing: (h) => [
      ...(/^Bearer$/i.test(h.authorization ?? "") ? [] : ["Authorization: Bearer <token>"]),
      ...(names(h.accept, "application/json") ? [] : ["Accept: application/json"]),
    ],
  },
  {
    matches: (r) => r.method === "POST" && r.path === "/oauth/token",
    what: "token request",
    missing: (h) => [
      ...(names(h.accept, "application/json") ? [] : ["Accept: application/json"]),
      ...(names(h["content-type"], "application/json") ? [] : ["Content-Type: application/json"]),
    ],
  },
  {
    matches: (r) => r.method === "POST" && r.path === "/oauth/revoke",
    what: "revocation",
    // RFC 7009 §2.1 (a form body), or JSON as the contract also takes.
    missing: (h) =>
      names(h["content-type"], "application/x-www-form-urlencoded") || names(h["content-type"], "application/json")
        ? []
        : ["Content-Type: application/x-www-form-urlencoded or application/json"],
  },
];

/**
 * Every request an actor's kit sent to the tenant's endpoints carried the headers the contract asks
 * of it (decision D5), as the tenant received them (the sandbox's request log). The actors call the
 * API through their kit's own client or transport and add nothing but `Sandbox-Actor`, so a header
 * missing here is missing for users. One line per target and kind of request, naming the actors.
 */
export function requestHeaders(requests, actors) {
  const byName = new Map(actors.map((actor) => [actor.name, actor]));
  const found = new Map();
  for (const request of requests) {
    const actor = byName.get(request.actor);
    const rule = actor && REQUIRED_HEADERS.find((candidate) => candidate.matches(request));
    const missing = rule ? rule.missing(request.headers) : [];
    if (missing.length === 0) continue;
    const key = `the ${actor.target} kit sent ${rule.what}s (${request.method} ${request.path}) without ${missing.join(" and ")}`;
    const entry = found.get(key) ?? { count: 0, names: new Set() };
    entry.count++;
    entry.names.add(actor.name);
    found.set(key, entry);
  }
  return [...found].map(
    ([line, { count, names }]) => `request-headers: ${line}: ${count} of them, by ${[...names].slice(0, 8).join(", ")}`,
  );
}
