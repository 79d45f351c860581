/**
 * Type tests (checked by `vitest --typecheck` and `tsc --strict`): the `fetch` option takes the global
 * `fetch` and anything shaped like it with no adapter, and `logSessionTo` takes `console` and a
 * pino-style logger as they are. (The sandbox's `sandbox.fetch` is checked in packages/sandbox, which
 * may import both packages.)
 */
import { describe, expectTypeOf, it } from "vitest";
import type { Scope as ContractScope } from "@tenant-integration/types";
import type { FetchLike, Logger, Scope, TokenManager, TokenManagerOptions } from "./index.js";
import { logSessionTo } from "./index.js";

/** pino's log function overloads (pino's `LogFn`), so that pino need not be installed. */
interface PinoLogFn {
  <T extends object>(obj: T, msg?: string, ...args: any[]): void;
  (obj: unknown, msg?: string, ...args: any[]): void;
  (msg: string, ...args: any[]): void;
}
interface PinoLike {
  level: string;
  trace: PinoLogFn;
  debug: PinoLogFn;
  info: PinoLogFn;
  warn: PinoLogFn;
  error: PinoLogFn;
  fatal: PinoLogFn;
  child(bindings: Record<string, unknown>): PinoLike;
}

describe("the fetch option", () => {
  it("is the shape of the global fetch, so typeof fetch and a wrapper of it fit", () => {
    expectTypeOf(fetch).toExtend<FetchLike>();
    expectTypeOf<FetchLike>().toExtend<TokenManagerOptions["fetch"]>();
    const wrapped: FetchLike = (input, init) => fetch(input, init);
    expectTypeOf(wrapped).toExtend<NonNullable<TokenManagerOptions["fetch"]>>();
  });

  it("accepts an in-process handler that takes a Request or a URL, like a sandbox's", () => {
    const handler = async (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
      new Response(String(input) + init?.method);
    expectTypeOf(handler).toExtend<NonNullable<TokenManagerOptions["fetch"]>>();
  });

  it("refuses a function that can take only a string, since the option promises fetch's inputs", () => {
    const stringOnly = async (input: string): Promise<Response> => new Response(input);
    // @ts-expect-error a URL or a Request would not fit a string-only function
    const option: TokenManagerOptions["fetch"] = stringOnly;
    expectTypeOf(option).not.toBeAny();
  });
});

describe("the logger option", () => {
  it("takes console as it is", () => {
    expectTypeOf(console).toExtend<Logger>();
  });

  it("takes a pino-style logger (fields first, message second) as it is, through logSessionTo", () => {
    expectTypeOf<PinoLike>().toExtend<Logger>();
    expectTypeOf<PinoLike>().toExtend<Parameters<typeof logSessionTo>[0]>();
    expectTypeOf(logSessionTo).returns.toExtend<NonNullable<TokenManagerOptions["logger"]>>();
    // A logger given as it is: the option takes only what logSessionTo makes.
    expectTypeOf<PinoLike>().not.toExtend<NonNullable<TokenManagerOptions["logger"]>>();
  });

  it("refuses a logger whose methods take the message first", () => {
    const messageFirst = { info: (message: string, fields: Record<string, unknown>) => void [message, fields] };
    // @ts-expect-error (message, fields) is not (fields, message)
    const logger: Logger = messageFirst;
    expectTypeOf(logger).not.toBeAny();
  });
});

describe("Scope (regression: issue 20, it had to be imported from @tenant-integration/types)", () => {
  it("is exported from the token manager, is the contract's scope names, and types the scopes of the options and of one sign-in", () => {
    expectTypeOf<Scope>().toEqualTypeOf<ContractScope>();
    expectTypeOf<TokenManagerOptions["scopes"]>().toEqualTypeOf<readonly Scope[]>();
    expectTypeOf<Parameters<TokenManager["beginAuthorization"]>[0]>().toEqualTypeOf<
      { scopes?: readonly Scope[] } | undefined
    >();
  });

  it("refuses a name that is not a scope of the contract", () => {
    // @ts-expect-error "profile:write" is not one of the contract's scopes
    const scope: Scope = "profile:write";
    expectTypeOf(scope).not.toBeAny();
  });
});
