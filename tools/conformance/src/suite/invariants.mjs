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
  "secrets-hygiene",
];

/** Which invariants apply to an outcome, when the scenario does not list them. */
export function invariantsFor(run) {
  const listed = run.invariants ?? INVARIANTS;
  if (run.expect.outcome === "kept") return listed;
  // A session ended by the tenant or signed out on purpose keeps the waits bounded and the logs clean;
  // the ended one is a reuse by definition, and neither has a session left to continue.
  const apply =
    run.expect.outcome === "ended"
      ? ["bounded-waits", "secrets-hygiene"]
      : ["single-redemption", "bounded-waits", "secrets-hygiene"];
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
