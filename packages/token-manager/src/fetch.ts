/**
 * The shape of the `fetch` option: the global `fetch` itself, so that `fetch`, a wrapper of it, or a
 * sandbox's in-process handler plugs in without an adapter. One type for the client and the token
 * manager (`packages/internal/src/fetch-like.ts`), so one function plugs into both.
 *
 * @see https://fetch.spec.whatwg.org/#fetch-method
 */
export type { FetchLike } from "@tenant-integration/internal";
