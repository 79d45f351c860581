/**
 * The body of a request that may be sent again, after a 401 or by a retry. The tenant client keeps
 * the body as its call's serializer made it (no copy is read: issue 20); a request that middleware
 * may have replaced, and every request on a plain openapi-fetch client, has a copy read before its
 * first send. A streamed body can be sent once only, so its request is never sent again.
 */
import type { Fetch } from "../client-state.js";
import type { Log } from "../logger.js";

/** The body a replay sends: `null` for a request without one; `undefined` when it cannot be sent again (a stream). */
export type ReplayBody = BodyInit | null | undefined;

/** A request on its way, with what sending it again needs. */
export interface Exchange {
  /** Where it is sent (and sent again). */
  readonly fetch: Fetch;
  /** The request as first sent, with its token when it carries one. */
  readonly request: Request;
  /** The token it carries (`undefined`: outside the API, no token); a 401 may replace it. */
  readonly token: string | undefined;
  /** Its body for a replay. */
  readonly body: ReplayBody;
}

/** What a call's body serializer made, kept for its replays: the tenant client's per-call record. */
export interface KeptBody {
  serialized: unknown;
}

/**
 * Wraps a call's body serializer so that what it makes is kept in `kept` for a replay. The tenant
 * client uses it only when no middleware of the caller runs before it (such middleware may replace
 * the request and its body); a body is then read as on a plain client.
 */
export function keepingBody(
  kept: KeptBody,
  serialize: (body: never, headers?: never) => unknown,
): (body: never, headers?: never) => unknown {
  return (body, headers) => {
    kept.serialized = serialize(body, headers);
    return kept.serialized;
  };
}

/**
 * Whether a body can be given to a new Request as it is, with the same headers: a string, bytes, a
 * Blob or URLSearchParams. A stream can be read only once; FormData would get a new boundary.
 */
function isResendable(body: unknown): body is BodyInit {
  return (
    typeof body === "string" ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams
  );
}

/** A copy of `request`'s body, read before it is sent (which consumes it). */
export async function readCopy(request: Request, log: Log | undefined): Promise<ArrayBuffer> {
  log?.("keep-copy", request, {});
  return request.clone().arrayBuffer();
}

/**
 * The body to keep for sending `request` again: none when it has none or will not be sent again
 * (`mayReplay`), the serialized one the call kept, or a copy read now.
 */
export function replayBody(
  request: Request,
  kept: KeptBody | undefined,
  mayReplay: boolean,
  log: Log | undefined,
): ReplayBody | Promise<ReplayBody> {
  if (request.body === null) return null;
  if (!mayReplay) return undefined;
  const serialized = kept?.serialized;
  if (serialized === undefined) return readCopy(request, log);
  if (isResendable(serialized)) return serialized;
  log?.("stream-body", request, {});
  return undefined;
}

/** A fresh copy of the exchange's (possibly sent) request with its kept body, and `token` if given. */
export function rebuild({ request, body }: Exchange, token?: string): Request {
  const headers = new Headers(request.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return new Request(request, { headers, body: body ?? null });
}

/** Releases a replaced response's body; not awaited (a cancelled tee branch settles late). */
export function discard(response: Response): void {
  void response.body?.cancel().catch(() => undefined);
}

/**
 * `onRequest` of a plain-client middleware that may send a request again: a copy of its body is read
 * into `kept` (by openapi-fetch's per-call `options`) when `mayReplay` says so.
 */
export function keepCopy(
  kept: WeakMap<object, ReplayBody>,
  mayReplay: (request: Request) => boolean,
  { request, options }: { request: Request; options: object },
): Promise<undefined> | undefined {
  if (request.body === null || kept.has(options) || !mayReplay(request)) return undefined;
  return readCopy(request, undefined).then((copy) => void kept.set(options, copy));
}

/** The body a plain-client middleware kept for `options`'s call: `null` without one, `undefined` if none was kept. */
export const keptFor = (kept: WeakMap<object, ReplayBody>, request: Request, options: object): ReplayBody =>
  request.body === null ? null : kept.get(options);
