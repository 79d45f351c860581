/**
 * Type tests of what integrators plug into the client, checked by vitest's typecheck pass (see
 * vitest.config.ts) and by `pnpm typecheck`:
 * - regression guard: openapi-react-query's `createQueryHooks(client)` compiles with no cast
 *   (it rejected the kit's client because of the 403 error class);
 * - the `fetch` option takes the global fetch's shape (`typeof fetch`, `FetchLike`, which
 *   `sandbox.fetch` is);
 * - the client re-exports the contract's types, and `TenantUser` can be augmented.
 */
import createQueryHooks from "openapi-react-query";
import type { Client } from "openapi-fetch";
import { fileURLToPath } from "node:url";
import { typeCheckSamples } from "@tenant-integration/readme-samples";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createTenantClient,
  ForbiddenError,
  HttpError,
  RateLimitError,
  ServerError,
  staticToken,
  UnauthorizedError,
  type HttpErrorFor,
  type FetchLike,
  type paths,
  type Scope,
  type TenantClient,
  type TenantClientOptions,
  type TenantPaths,
  type TenantUser,
  type User,
} from "./index.js";
import { fakeFetch, json } from "./test-support/fake-fetch.js";

const baseUrl = "https://acme.tenant.example";
const client = createTenantClient({ baseUrl, auth: staticToken("at_1"), fetch: fakeFetch(json(200, { name: "Ada" })) });

describe("the client in openapi-fetch's ecosystem", () => {
  it("is accepted by openapi-react-query's createQueryHooks with no cast", () => {
    const hooks = createQueryHooks(client);
    expectTypeOf(hooks).toEqualTypeOf<ReturnType<typeof createQueryHooks<TenantPaths>>>();
    // a hook as a component would write it; never called here (it needs React)
    const useUser = () => hooks.useQuery("get", "/api/v1/auth/user");
    type Query = ReturnType<typeof useUser>;
    // the hook's error is the client's error value: status, code, body, headers
    expectTypeOf<NonNullable<Query["error"]>["status"]>().toEqualTypeOf<number>();
    expectTypeOf<NonNullable<Query["error"]>["headers"]>().toEqualTypeOf<Readonly<Record<string, string>>>();
    expect(typeof hooks.useQuery).toBe("function");
  });

  it("is an openapi-fetch Client of TenantPaths", () => {
    expectTypeOf<TenantClient>().toMatchTypeOf<Client<TenantPaths>>();
    const asClient: Client<TenantPaths> = client;
    expect(asClient).toBe(client);
  });

  it("types error as the HttpError classes, narrowed by instanceof", async () => {
    const { error } = await client.GET("/api/v1/auth/user");
    if (error) {
      expectTypeOf(error.status).toEqualTypeOf<number>();
      if (error instanceof ForbiddenError) expectTypeOf(error.requiredScope).toMatchTypeOf<readonly string[]>();
    }
    expectTypeOf<ForbiddenError>().toMatchTypeOf<HttpError>();
    expect(error).toBeUndefined();
  });
});

describe("the fetch option", () => {
  it("takes the global fetch and anything of its shape, as sandbox.fetch is", () => {
    expectTypeOf<typeof fetch>().toMatchTypeOf<FetchLike>();
    expectTypeOf<typeof fetch>().toMatchTypeOf<NonNullable<TenantClientOptions["fetch"]>>();
    // the shape the sandbox's fetch has: (input, init?) like the global one
    const sandboxShaped: (input: string | URL | Request, init?: RequestInit) => Promise<Response> = async () =>
      json(200, {});
    const options: TenantClientOptions = { baseUrl, auth: staticToken("at_1"), fetch: sandboxShaped };
    const withGlobal: TenantClientOptions = { baseUrl, auth: staticToken("at_1"), fetch };
    expect(createTenantClient(options).baseUrl).toBe(baseUrl);
    expect(withGlobal.fetch).toBe(fetch);
  });

  it("refuses a fetch that cannot take a URL string (types)", () => {
    const requestOnly = async (request: Request) => new Response(request.url);
    // @ts-expect-error the global fetch's shape accepts a string or URL too
    const options: TenantClientOptions = { baseUrl, auth: staticToken("at_1"), fetch: requestOnly };
    expect(options).toBeDefined();
  });
});

describe("types re-exported for users", () => {
  it("re-exports Scope, User, paths and TenantUser, whose fields are unknown by default", async () => {
    expectTypeOf<"profile:read">().toMatchTypeOf<Scope>();
    expectTypeOf<paths["/api/v1/auth/user"]["get"]>().not.toBeNever();
    expectTypeOf<User>().toEqualTypeOf<{ [key: string]: unknown }>();
    expectTypeOf<TenantUser["name"]>().toEqualTypeOf<unknown>();
    const { data } = await client.GET("/api/v1/auth/user");
    expectTypeOf(data).toMatchTypeOf<TenantUser | undefined>();
    if (data) expectTypeOf(data.name).toEqualTypeOf<unknown>();
    expect(data).toEqual({ name: "Ada" });
  });
});

describe("augmenting TenantUser (each program compiled on its own, as an app would be)", () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const compile = (source: string) =>
    typeCheckSamples({ root, samples: [source], paths: { "@tenant-integration/client": ["./src/index.ts"] } });
  const header = `
import { createTenantClient, staticToken } from "@tenant-integration/client";
const client = createTenantClient({ baseUrl: "https://acme.tenant.example", auth: staticToken("t") });
const { data } = await client.GET("/api/v1/auth/user");
`;

  it("reads a declared field as string, and leaves the others unknown", () => {
    const augmented = `${header}
declare module "@tenant-integration/client" {
  interface TenantUser {
    name: string;
  }
}
if (data) {
  const name: string = data.name;
  // @ts-expect-error undeclared fields stay unknown
  const email: string = data.email;
  void name, email;
}
export {};
`;
    expect(compile(augmented)).toEqual([]);
  }, 60_000);

  it("keeps every field unknown without the augmentation", () => {
    const plain = `${header}
if (data) {
  // @ts-expect-error not declared: unknown
  const name: string = data.name;
  const anything: unknown = data.name;
  void name, anything;
}
export {};
`;
    expect(compile(plain)).toEqual([]);
    // and the check is live: the same line without the expectation fails
    expect(compile(plain.replace("// @ts-expect-error not declared: unknown", "")).join("\n")).toContain(
      "not assignable to type 'string'",
    );
  }, 60_000);
});

describe("HttpErrorFor", () => {
  it("maps each status to its error class", () => {
    expectTypeOf<HttpErrorFor<401, { a: 1 }>>().toEqualTypeOf<UnauthorizedError<{ a: 1 }>>();
    expectTypeOf<HttpErrorFor<403, unknown>>().toEqualTypeOf<ForbiddenError<unknown>>();
    expectTypeOf<HttpErrorFor<429, unknown>>().toEqualTypeOf<RateLimitError<unknown>>();
    expectTypeOf<HttpErrorFor<503, unknown>>().toEqualTypeOf<ServerError<unknown>>();
    expectTypeOf<HttpErrorFor<"5XX", unknown>>().toEqualTypeOf<ServerError<unknown>>();
    expectTypeOf<HttpErrorFor<404, string>>().toEqualTypeOf<HttpError<string>>();
    expect(new ServerError({ status: 503, body: undefined, headers: {} }).code).toBe("SERVER_ERROR");
  });
});
