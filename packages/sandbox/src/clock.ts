/**
 * The sandbox's notion of "now": a base time source plus an offset that only moves forward.
 *
 * @module
 */

/** A clock whose time tests can move forward without waiting. */
export interface Clock {
  /** The current time in milliseconds since the epoch (base time plus every advance). */
  now(): number;
  /**
   * Moves the clock forward by `seconds` and returns the new time in milliseconds.
   *
   * @throws RangeError when `seconds` is negative, not finite, or larger than {@link MAX_ADVANCE_SECONDS}.
   */
  advance(seconds: number): number;
  /** The total number of seconds the clock has been moved forward. */
  readonly offsetSeconds: number;
}

/** The largest single advance the clock accepts: ten years, far beyond every token lifetime. */
export const MAX_ADVANCE_SECONDS = 10 * 365 * 24 * 60 * 60;

/** Options of {@link createClock}. */
export interface ClockOptions {
  /** Seconds the clock starts moved forward by (a restored test clock); default 0. */
  readonly offsetSeconds?: number;
  /** Called after every advance, e.g. to evict what the jump expired. */
  readonly onAdvance?: () => void;
}

/**
 * Creates a {@link Clock} on top of `base` (default `Date.now`).
 *
 * @example
 * const clock = createClock();
 * clock.advance(901); // the access tokens issued before are now expired
 * @see RFC 6749 §5.1 (expires_in counts seconds from issue)
 */
export function createClock(base: () => number = Date.now, options: ClockOptions = {}): Clock {
  let offsetMs = Math.round((options.offsetSeconds ?? 0) * 1000);
  return {
    now: () => base() + offsetMs,
    advance(seconds: number): number {
      if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_ADVANCE_SECONDS) {
        throw new RangeError(`advanceSeconds must be a number from 0 to ${MAX_ADVANCE_SECONDS}`);
      }
      offsetMs += Math.round(seconds * 1000);
      options.onAdvance?.();
      return base() + offsetMs;
    },
    get offsetSeconds() {
      return offsetMs / 1000;
    },
  };
}
