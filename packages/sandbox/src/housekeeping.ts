/**
 * Eviction of expired state: on use (at most once a minute of sandbox time, checked on every
 * request), when the test clock jumps, and on a timer while the sandbox sits idle.
 *
 * @module
 */
import type { Clock } from "./clock.js";

/** How often expired records are swept, in milliseconds of sandbox time (on use) and real time (timer). */
export const SWEEP_INTERVAL_MS = 60_000;

/** Runs the sweeps of the sandbox's stores. */
export class Housekeeping {
  readonly #clock: Clock;
  readonly #sweepers: readonly (() => void)[];
  #lastSweep: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(clock: Clock, sweepers: readonly (() => void)[]) {
    this.#clock = clock;
    this.#sweepers = sweepers;
    this.#lastSweep = clock.now();
  }

  /** Evicts every expired record now. */
  sweep(): void {
    this.#lastSweep = this.#clock.now();
    for (const sweep of this.#sweepers) sweep();
  }

  /** Sweeps when a minute of sandbox time passed since the last sweep; cheap otherwise. */
  sweepIfDue(): void {
    if (this.#clock.now() - this.#lastSweep >= SWEEP_INTERVAL_MS) this.sweep();
  }

  /**
   * Starts the idle timer, once. It is started on the first request rather than at creation,
   * because some runtimes (workers) refuse timers outside a request. It is unref'd where the
   * runtime allows, so it never keeps a process alive, and holds the sandbox only weakly, so a
   * sandbox nobody references any more is collected and its timer ends.
   */
  startTimer(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#arm(new WeakRef(this));
  }

  /** Stops the timer for good. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  #arm(self: WeakRef<Housekeeping>): void {
    // A static function and a weak reference: the pending timer does not keep the sandbox alive.
    const timer = setTimeout(Housekeeping.#tick, SWEEP_INTERVAL_MS, self);
    // Node and Bun return an object with unref(); Deno returns a number and has Deno.unrefTimer.
    if (typeof timer === "object" && timer !== null && "unref" in timer) (timer as { unref(): void }).unref();
    else (globalThis as { Deno?: { unrefTimer?(id: unknown): void } }).Deno?.unrefTimer?.(timer);
    this.#timer = timer;
  }

  static #tick(self: WeakRef<Housekeeping>): void {
    const housekeeping = self.deref();
    if (housekeeping === undefined || housekeeping.#stopped) return;
    housekeeping.sweepIfDue();
    housekeeping.#arm(self);
  }
}
