/**
 * The shape of the global `fetch`, which the client's `fetch` option accepts: `globalThis.fetch`,
 * undici's, a test double, or the sandbox's in-process `sandbox.fetch`, with no adapter. The token
 * manager declares the same type under the same name, so one function plugs into both.
 *
 * The client calls it as `fetch(request)` with a `Request` (the second argument is not used).
 *
 * @example
 * ```ts
 * const logged: FetchLike = async (input, init) => {
 *   const response = await fetch(input, init);
 *   console.log(response.status);
 *   return response;
 * };
 * createTenantClient({ baseUrl, auth, fetch: logged });
 * ```
 * @see https://fetch.spec.whatwg.org/#fetch-method
 */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
