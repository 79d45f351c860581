/**
 * The shape of the `fetch` option: the global `fetch` itself, so that `fetch`, a wrapper of it, or a
 * sandbox's in-process handler plugs in without an adapter.
 *
 * @see https://fetch.spec.whatwg.org/#fetch-method
 */

/**
 * A function shaped like the global `fetch`: `typeof fetch` fits, and so does the sandbox's
 * `sandbox.fetch`. The manager calls it with a URL string and a `RequestInit`.
 *
 * @example
 * ```ts
 * const logged: FetchLike = async (input, init) => {
 *   const response = await fetch(input, init);
 *   console.log(init?.method, response.status);
 *   return response;
 * };
 * createTokenManager({ ...options, fetch: logged });
 * ```
 * @see https://fetch.spec.whatwg.org/#fetch-method
 */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
