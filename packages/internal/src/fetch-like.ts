/**
 * A function shaped like the global `fetch`, which the `fetch` option of the client and of the token
 * manager accepts: `globalThis.fetch`, undici's, a wrapper of it, a test double, or the sandbox's
 * in-process `sandbox.fetch`, with no adapter. Both packages export this one type, so one function
 * plugs into both.
 *
 * The client calls it as `fetch(request)` with a `Request`; the token manager as
 * `fetch(url, init)` with a URL string and a `RequestInit`.
 *
 * @example
 * ```ts
 * const logged: FetchLike = async (input, init) => {
 *   const response = await fetch(input, init);
 *   console.log(response.status);
 *   return response;
 * };
 * createTenantClient({ baseUrl, auth, fetch: logged });
 * createTokenManager({ ...options, fetch: logged });
 * ```
 * @see https://fetch.spec.whatwg.org/#fetch-method
 */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
