// The rows of a server acting for many users, as numbers become rows (no process, no I/O, so
// sessions.test.mjs specifies them in `pnpm test`): memory per cached and per dropped session judged
// by the middle half of its rounds (sessions-memory.mjs), a session's client against a manager built
// by hand with its A/A, and the refreshes of one release counted per session from the sandbox's
// ledger (sessions-fleet.mjs).
import { QUICK, judgedRow, paired, spread } from "./stats.mjs";

/** Sessions in one process for the memory and client rows. */
export const SESSIONS = 1000;
/** Calls per contender per paired round of the client rows. */
export const CALLS = QUICK ? 200 : 500;
const KIB = 1024;

/** "3.13 KiB", "−0.06 KiB" (a true minus sign: a dropped session may leave less than nothing, by noise). */
const kib = (bytes) => `${bytes < 0 ? "−" : ""}${(Math.abs(bytes) / KIB).toFixed(2)} KiB`;

/** The memory rows of one kit from per-round bytes: per cached session (judged by its middle half) and per dropped one. */
export function memoryRows(kit, { cached, dropped }, goalKiB, how) {
  const c = spread(cached);
  const d = spread(dropped);
  const describe = (s, what) =>
    `${kib(s.median)} per session ${what} (median of ${s.rounds} rounds of ${SESSIONS.toLocaleString("en")} sessions; middle half ${kib(s.q1)}–${kib(s.q3)}, all ${kib(s.min)}–${kib(s.max)}; ${how})`;
  return [
    judgedRow({
      metric: `${kit} memory per cached session`,
      value: describe(c, "while cached"),
      c,
      aa: null,
      goal: { atMost: goalKiB * KIB },
      goalText: `≤ ${goalKiB} KiB`,
    }),
    {
      metric: `${kit} memory per dropped session`,
      value: describe(d, "left once dropped as idle"),
      goal: "",
      met: null,
    },
  ];
}

/** The row of a request for a user: by hand against the sessions object, the A/A beside. */
export function clientRow(kit, times, { sessionsCall, byHandCall }) {
  const c = paired(times.byHand, times.sessions);
  const aa = paired(times.sessionsAgain, times.sessions);
  return judgedRow({
    metric: `${kit} request for a user: a session's client against a manager built by hand`,
    value: `${sessionsCall} and a GET ${c.b.toFixed(1)} µs CPU, ${byHandCall} and a GET ${c.a.toFixed(1)} µs: by hand costs ${c.ratio.toFixed(2)}× (${c.rounds} paired rounds of ${CALLS} calls over ${SESSIONS.toLocaleString("en")} users: middle half ${c.q1.toFixed(2)}–${c.q3.toFixed(2)}×, all ${c.min.toFixed(2)}–${c.max.toFixed(2)}×)`,
    c,
    aa,
    aaLabel: "a second sessions object against the first",
    style: "times",
  });
}

/**
 * The refreshes of one release from the ledger: how many families were refreshed exactly once, how
 * many another number of times, and the refresh tokens presented twice (reuses).
 */
export function refreshesPerFamily(ledger) {
  const counts = new Map();
  for (const token of ledger.refreshTokens)
    for (const presentation of token.presentations)
      if (presentation.outcome === "ok") counts.set(token.family, (counts.get(token.family) ?? 0) + 1);
  const once = [...counts.values()].filter((n) => n === 1).length;
  return { once, otherwise: counts.size - once, reuses: ledger.reuses?.length ?? 0 };
}
