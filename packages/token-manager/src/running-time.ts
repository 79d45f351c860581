/**
 * A request timeout that counts only the time this process ran, so that a process that was stopped
 * (SIGSTOP, a suspended laptop, a debugger) reads the answer that arrived meanwhile before its timeout
 * counts on (spec/token-store/README.md, step 6). The same rule as the Python kit's `_running_time.py`.
 */

/**
 * Aborts `controller` after `ms` milliseconds of time this process ran. A tick that comes far later
 * than asked means the process was stopped (SIGSTOP, a suspended machine, a debugger): that time is
 * not the tenant's, and the tick only re-arms, so that an answer that arrived meanwhile is read
 * before the timeout counts on.
 */
export const runningTimeout = (controller: AbortController, ms: number): (() => void) => {
  const step = Math.min(ms, 250);
  let ran = 0;
  let last = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (delay: number) => ((timer = setTimeout(tick, delay)) as { unref?(): void }).unref?.();
  const tick = () => {
    const at = performance.now();
    const gap = at - last;
    last = at;
    if (gap > step + 1_000) return arm(step);
    ran += gap;
    if (ran >= ms) controller.abort(new DOMException("The request timed out.", "TimeoutError"));
    else arm(Math.min(step, ms - ran));
  };
  arm(step);
  return () => clearTimeout(timer);
};

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
