/**
 * Regression guard for issue 12 point 6, through the client: a token in a fetch error's `cause`
 * chain (at depth 2 and beyond, in non-enumerable properties, in `AggregateError.errors`) never
 * reaches the thrown NetworkError. The rule itself, every form at every depth, is tested with it in
 * `packages/internal/src/redact.test.ts`.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { staticToken } from "./access-token-source.js";
import { createTenantClient } from "./create-tenant-client.js";
import { NetworkError } from "./errors.js";
import { fakeFetch } from "./test-support/fake-fetch.js";

describe("NetworkError through the client: the cause chain is scrubbed", () => {
  // b64token characters only: the client refuses to send anything else (INVALID_TOKEN)
  const TOKEN = "at_Zm9v+YmFy/YmF6==";

  it("removes the token at cause depth 3, in a hidden property and in AggregateError.errors", async () => {
    const hidden = new Error("socket closed");
    Object.defineProperty(hidden, "sentHeaders", { value: `authorization: Bearer ${TOKEN}`, enumerable: false });
    const failure = Object.assign(new TypeError("fetch failed"), {
      cause: new AggregateError(
        [hidden, new Error("retry", { cause: new Error(`GET /x?t=${encodeURIComponent(TOKEN)}`) })],
        "connect failed",
      ),
    });
    const client = createTenantClient({
      baseUrl: "https://acme.tenant.example",
      auth: staticToken(TOKEN),
      fetch: fakeFetch(failure),
      retry: false,
    });
    const error = await client.GET("/api/v1/auth/user").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    // every way a careless logger could print it
    const printed = [
      String(error),
      JSON.stringify(error),
      inspect(error, { depth: 50, showHidden: true }),
      (error as Error).stack,
    ].join("\n");
    expect(printed).not.toContain(TOKEN);
    expect(printed).not.toContain(encodeURIComponent(TOKEN));
    expect(printed).toContain("fetch failed");
  });
});
