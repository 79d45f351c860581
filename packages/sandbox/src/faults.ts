/**
 * Fault injection for tests: the next N requests to a route get an error status (429 with
 * `Retry-After`, 500, 503…), a slow answer, or a dropped connection, so that an integration's
 * retries, timeouts and error handling can be tested against the sandbox instead of a mock.
 *
 * @module
 */

/** What a fault does to a request it catches. */
export type FaultKind = "status" | "slow" | "drop" | "lose";

/**
 * A fault to inject, as given to `sandbox.faults.add()`, `POST /__sandbox/faults` or `--fault`.
 *
 * @example
 * ```ts
 * sandbox.faults.add({ route: "/api/v1/auth/user", kind: "status", status: 429, retryAfter: 1, count: 2 });
 * sandbox.faults.add({ route: "/oauth/token", method: "POST", kind: "drop" });
 * sandbox.faults.add({ route: "/api/v1/*", kind: "slow", delayMs: 2_000 });
 * sandbox.faults.add({ route: "/oauth/token", method: "POST", kind: "lose" }); // rotated, answer lost
 * ```
 */
export interface FaultSpec {
  /**
   * The path the fault applies to, as requested, without the query (`/oauth/token`); a path ending
   * in `/*` applies to that path and everything under it (`/api/v1/*`). Never under `/__sandbox/`.
   */
  readonly route: string;
  /** The method it applies to (`GET`, `POST`…); every method when absent. CORS preflights are never caught. */
  readonly method?: string;
  /**
   * - `status`: answer `status` at once, without running the route (nothing changes in the sandbox).
   * - `slow`: wait `delayMs` (real time), then answer normally.
   * - `drop`: close the connection without an answer; in-process (`sandbox.fetch`) the call
   *   rejects with `TypeError: fetch failed`, as `fetch` does when a server hangs up.
   * - `lose`: run the route (everything it changes stays changed: a refresh rotates the token),
   *   then close the connection without sending its answer: the answer lost on the way back
   *   (a reset, a proxy timing out). In-process the call rejects as for `drop`.
   */
  readonly kind: FaultKind;
  /** For `status`: the status code, 400 to 599 (default 503). */
  readonly status?: number;
  /** For `status`: the `Retry-After` header, in whole seconds (RFC 9110 §10.2.3). None by default. */
  readonly retryAfter?: number;
  /** For `slow`: the wait in milliseconds, 1 to {@link MAX_FAULT_DELAY_MS}. */
  readonly delayMs?: number;
  /** How many matching requests the fault catches before it is gone (default 1, at most {@link MAX_FAULT_COUNT}). */
  readonly count?: number;
}

/** A fault the sandbox holds: its spec with defaults applied, its id and how many requests it still catches. */
export interface Fault {
  /** Increasing number, from 1. */
  readonly id: number;
  readonly route: string;
  /** Upper case, or `null` for every method. */
  readonly method: string | null;
  readonly kind: FaultKind;
  /** The status of a `status` fault, else `null`. */
  readonly status: number | null;
  readonly retryAfter: number | null;
  readonly delayMs: number | null;
  /** How many more requests it catches. */
  readonly remaining: number;
}

/** A fault that cannot be injected; the admin route answers it with 400. */
export class FaultConfigError extends Error {
  override readonly name = "FaultConfigError";
  readonly code = "invalid_fault";
}

/** The longest `slow` delay, in milliseconds. */
export const MAX_FAULT_DELAY_MS = 120_000;
/** The largest `count`. */
export const MAX_FAULT_COUNT = 10_000;
/** The largest `retryAfter`, in seconds (a day). */
export const MAX_RETRY_AFTER_SECONDS = 86_400;
/** The most faults held at once. */
export const MAX_FAULTS = 100;

const KINDS: readonly FaultKind[] = ["status", "slow", "drop", "lose"];
const SPEC_KEYS = new Set(["route", "method", "kind", "status", "retryAfter", "delayMs", "count"]);

const isWhole = (value: unknown, min: number, max: number): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;

/**
 * Checks a fault spec (from code or from JSON) and applies the defaults.
 *
 * @throws FaultConfigError naming the field that is wrong.
 * @example parseFault({ route: "/oauth/token", kind: "status", status: 429, retryAfter: 2 }, 1)
 */
export function parseFault(input: unknown, id: number): Fault {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new FaultConfigError("A fault is a JSON object.");
  const spec = input as Record<string, unknown>;
  const unknown = Object.keys(spec).find((key) => !SPEC_KEYS.has(key));
  if (unknown !== undefined)
    throw new FaultConfigError(`Unknown field "${unknown.slice(0, 64)}"; a fault has ${[...SPEC_KEYS].join(", ")}.`);
  const { route, method, kind } = spec;
  if (typeof route !== "string" || !route.startsWith("/") || /[?#\s]/.test(route) || route.length > 1024) {
    throw new FaultConfigError(
      "route must be a path starting with /, without a query (e.g. /api/v1/auth/user or /api/v1/*).",
    );
  }
  if (route === "/__sandbox" || route.startsWith("/__sandbox/") || route === "/*") {
    throw new FaultConfigError("route must not cover /__sandbox/: the test routes stay reachable.");
  }
  if (method !== undefined && (typeof method !== "string" || !/^[A-Za-z]{1,16}$/.test(method))) {
    throw new FaultConfigError("method must be an HTTP method such as GET or POST.");
  }
  if (typeof kind !== "string" || !KINDS.includes(kind as FaultKind))
    throw new FaultConfigError(`kind must be one of ${KINDS.join(", ")}.`);
  const onlyFor = (field: string, owner: FaultKind): void => {
    if (spec[field] !== undefined && kind !== owner)
      throw new FaultConfigError(`${field} applies only to kind "${owner}".`);
  };
  onlyFor("status", "status");
  onlyFor("retryAfter", "status");
  onlyFor("delayMs", "slow");
  const status = spec["status"] ?? (kind === "status" ? 503 : undefined);
  if (status !== undefined && !isWhole(status, 400, 599))
    throw new FaultConfigError("status must be an integer from 400 to 599.");
  const retryAfter = spec["retryAfter"];
  if (retryAfter !== undefined && !isWhole(retryAfter, 0, MAX_RETRY_AFTER_SECONDS)) {
    throw new FaultConfigError(`retryAfter must be a whole number of seconds from 0 to ${MAX_RETRY_AFTER_SECONDS}.`);
  }
  const delayMs = spec["delayMs"];
  if (kind === "slow" && !isWhole(delayMs, 1, MAX_FAULT_DELAY_MS)) {
    throw new FaultConfigError(`delayMs must be an integer from 1 to ${MAX_FAULT_DELAY_MS} for kind "slow".`);
  }
  const count = spec["count"] ?? 1;
  if (!isWhole(count, 1, MAX_FAULT_COUNT))
    throw new FaultConfigError(`count must be an integer from 1 to ${MAX_FAULT_COUNT}.`);
  return {
    id,
    route,
    method: typeof method === "string" ? method.toUpperCase() : null,
    kind: kind as FaultKind,
    status: (status as number | undefined) ?? null,
    retryAfter: (retryAfter as number | undefined) ?? null,
    delayMs: (delayMs as number | undefined) ?? null,
    remaining: count,
  };
}

const NUMERIC_KEYS = new Set(["status", "retryAfter", "delayMs", "count"]);

/**
 * Reads a fault from the command line's `--fault` form: comma-separated `key=value` pairs with the
 * keys of {@link FaultSpec}.
 *
 * @throws FaultConfigError when a pair is not `key=value`, a number is not one, or the fault is invalid.
 * @example parseFaultSpec("route=/oauth/token,method=POST,kind=status,status=503,retryAfter=2,count=2")
 */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: Record<string, unknown> = {};
  for (const part of text.split(",")) {
    if (part.trim() === "") continue;
    const equals = part.indexOf("=");
    if (equals <= 0)
      throw new FaultConfigError(`"${part.slice(0, 64)}" is not key=value (keys: ${[...SPEC_KEYS].join(", ")})`);
    const key = part.slice(0, equals).trim();
    const value = part.slice(equals + 1).trim();
    if (NUMERIC_KEYS.has(key) && !/^\d{1,9}$/.test(value))
      throw new FaultConfigError(`${key} must be a whole number, not "${value.slice(0, 64)}"`);
    spec[key] = NUMERIC_KEYS.has(key) ? Number(value) : value;
  }
  parseFault(spec, 0);
  return spec as unknown as FaultSpec;
}

/** Whether a fault's route covers `path`. */
function covers(route: string, path: string): boolean {
  if (route.endsWith("/*")) {
    const base = route.slice(0, -2);
    return path === base || path.startsWith(`${base}/`);
  }
  return path === route;
}

/**
 * The faults a sandbox holds, in the order they were added. A request is caught by the first
 * fault that covers its method and path; each catch uses up one of the fault's `count`.
 */
export class Faults {
  #faults: Fault[] = [];
  #nextId = 1;

  /**
   * Adds a fault; it catches the next `count` matching requests.
   *
   * @throws FaultConfigError when the spec is invalid or {@link MAX_FAULTS} are held already.
   * @example sandbox.faults.add({ route: "/api/v1/auth/user", kind: "status", status: 503, count: 2 })
   */
  add(spec: FaultSpec): Fault {
    const fault = parseFault(spec, this.#nextId);
    if (this.#faults.length >= MAX_FAULTS)
      throw new FaultConfigError(`At most ${MAX_FAULTS} faults are held at once; clear some first.`);
    this.#nextId++;
    this.#faults.push(fault);
    return fault;
  }

  /** The faults still waiting for requests, oldest first. */
  list(): Fault[] {
    return [...this.#faults];
  }

  /** Removes every fault; returns how many were removed. */
  clear(): number {
    const count = this.#faults.length;
    this.#faults = [];
    return count;
  }

  /**
   * The fault that catches a request, if any, counting the catch. Cheap when no fault is held.
   *
   * @internal
   */
  take(method: string, path: string): Fault | undefined {
    if (this.#faults.length === 0) return undefined;
    const index = this.#faults.findIndex(
      (fault) => (fault.method === null || fault.method === method) && covers(fault.route, path),
    );
    if (index < 0) return undefined;
    const fault = this.#faults[index]!;
    const remaining = fault.remaining - 1;
    if (remaining === 0) this.#faults.splice(index, 1);
    else this.#faults[index] = { ...fault, remaining };
    return fault;
  }
}

/**
 * The answer of a `status` fault: an OAuth-style error body (RFC 6749 §5.2 shape), `no-store`,
 * and `Retry-After` when asked for.
 *
 * @see RFC 9110 §10.2.3 (Retry-After), RFC 6585 §4 (429)
 */
export function faultResponse(fault: Fault): Response {
  const status = fault.status ?? 503;
  const error =
    status === 429 || status === 503 ? "temporarily_unavailable" : status >= 500 ? "server_error" : "invalid_request";
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  if (fault.retryAfter !== null) headers["Retry-After"] = String(fault.retryAfter);
  return Response.json(
    { error, error_description: `Fault ${fault.id} injected by the sandbox: ${status}.` },
    { status, headers },
  );
}

/**
 * What a dropped connection looks like to an in-process caller: the `TypeError` that `fetch` rejects
 * with when a server closes the connection without an answer.
 */
export function droppedConnection(fault: Fault): TypeError {
  return new TypeError("fetch failed", { cause: new Error(`The sandbox dropped the connection (fault ${fault.id}).`) });
}

/** Waits `ms` of real time; resolves `false` at once if `signal` aborts first. */
export function delay(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
