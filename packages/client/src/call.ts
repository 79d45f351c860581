/**
 * The calls of the tenant client: its typed methods (`client.GET(…)`, `client.raw.POST(…)`) and
 * `use`/`eject` bound to the client's state, and one call: its timeout, openapi-fetch with the
 * client's `fetch` ({@link send}), and the error value of a non-2xx answer.
 */
import type { FetchLike } from "@tenant-integration/internal";
import { defaultBodySerializer, type Middleware } from "openapi-fetch";
import { asFetch, type ClientState } from "./client-state.js";
import { httpErrorFrom, TenantClientError } from "./errors.js";
import { keepingBody } from "./middleware/replay.js";
import { type Call, send } from "./send.js";
import type { HttpMethod, RawPaths, TypedClient } from "./client-types.js";
import type { CallTimeout } from "./timeout.js";

/** The per-call options the client reads before openapi-fetch sees the rest. */
export interface CallInit {
  timeout?: unknown;
  signal?: AbortSignal | null;
  middleware?: Middleware[];
  body?: unknown;
  bodySerializer?: typeof defaultBodySerializer;
  fetch?: FetchLike;
  [key: string]: unknown;
}

/** What openapi-fetch resolves a call to. */
interface FetchResult {
  readonly response: Response;
  readonly error?: unknown;
}

/** An HTTP method as openapi-fetch's client names its functions. */
export type Method = "GET" | "PUT" | "POST" | "DELETE" | "OPTIONS" | "HEAD" | "PATCH" | "TRACE";

/** The HTTP methods of openapi-fetch's client (and of the typed client). */
export const METHODS: readonly Method[] = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"];

/** openapi-fetch's function for `method`, untyped: the typed client's types are the caller's. */
const sender = (state: ClientState, method: Method) =>
  (state.openapi as unknown as Record<Method, (url: string, init?: CallInit) => Promise<FetchResult>>)[method];

/** Registers middleware of the caller: it runs before the client's `fetch`, as every middleware does. */
export function use(state: ClientState, ...middleware: Middleware[]): void {
  if (middleware.length > 0) state.callerMiddleware = true;
  state.openapi.use(...middleware);
}

/** Unregisters middleware of the caller. */
export function eject(state: ClientState, ...middleware: Middleware[]): void {
  state.openapi.eject(...middleware);
}

/** The typed methods of the client, or of `client.raw`, bound to the state. */
export function typedClient(state: ClientState, raw: boolean): TypedClient<RawPaths> {
  const methods: Record<string, unknown> = {
    request: (method: HttpMethod, url: string, init?: CallInit) =>
      call(state, method.toUpperCase() as Method, url, init, raw),
    use: use.bind(null, state),
    eject: eject.bind(null, state),
  };
  for (const method of METHODS) methods[method] = (url: string, init?: CallInit) => call(state, method, url, init, raw);
  return methods as unknown as TypedClient<RawPaths>;
}

/**
 * One call: openapi-fetch's `{ data, error, response }`, with `error` the {@link HttpError} of a
 * non-2xx answer. A call with nothing but a path, parameters, headers or its own middleware (nearly
 * all) goes straight to openapi-fetch; one with a timeout, a body, its own `fetch`, or through
 * `client.raw` passes openapi-fetch a `fetch` of its own ({@link callWith}).
 */
export function call(
  state: ClientState,
  method: Method,
  url: string,
  init: CallInit | undefined,
  raw: boolean,
): Promise<unknown> {
  const plain =
    !raw &&
    !state.timeout &&
    (init === undefined || (init.body === undefined && init.fetch === undefined && !("timeout" in init)));
  if (!plain) return callWith(state, method, url, init, raw);
  return sender(state, method)(url, init).then((result) => withError(state, result));
}

/** The result of a call, with the error value of a non-2xx answer (the tokens its request carried removed). */
function withError(state: ClientState, result: FetchResult): FetchResult {
  const { response } = result;
  if (response.ok) return result;
  return { error: httpErrorFrom(response, result.error, state.tokensSent.get(response) ?? [], Date.now()), response };
}

/** A call that brings a timeout, a body, its own `fetch`, or comes through `client.raw`. */
async function callWith(
  state: ClientState,
  method: Method,
  url: string,
  init: CallInit | undefined,
  raw: boolean,
): Promise<unknown> {
  const { timeout: _, ...own }: CallInit = init ?? {};
  const limit =
    init !== undefined && "timeout" in init ? (timeoutOf(init, " (per request)") ?? state.timeout) : state.timeout;
  const running = limit ? limit.start(init?.signal) : undefined;
  if (running) own.signal = running.signal;
  const one: Call = { raw, fetch: init?.fetch ? asFetch(init.fetch) : undefined, serialized: undefined };
  // The serialized body is kept for a replay (after a 401, or a retry), unless middleware of the
  // caller may replace the request first.
  if (init?.body !== undefined && !state.callerMiddleware && !init.middleware?.length)
    own.bodySerializer = keepingBody(one, init.bodySerializer ?? defaultBodySerializer) as typeof defaultBodySerializer;
  own.fetch = (request) => send(state, one, request as Request);
  try {
    return withError(state, await sender(state, method)(url, own));
  } catch (failure) {
    throw running ? running.thrown(failure, { method, url: `${state.baseUrl}${url}` }) : failure;
  } finally {
    running?.stop();
  }
}

/**
 * The `timeout` of the client's options or of one call's: a limit made by `timeoutAfter`, or `false`
 * or nothing for none. (A number, as other fetch wrappers take, is refused rather than ignored.)
 *
 * @throws {@link TenantClientError} `INVALID_OPTIONS` naming the option (and `where`) otherwise
 */
export function timeoutOf(holder: { timeout?: unknown }, where: string): CallTimeout | false | undefined {
  const { timeout } = holder;
  if (timeout === undefined || timeout === false || typeof (timeout as CallTimeout | null)?.start === "function")
    return timeout as CallTimeout | false | undefined;
  throw new TenantClientError("INVALID_OPTIONS", `Invalid timeout${where}: pass timeoutAfter(ms), or false`);
}
