/**
 * Random and hand-made malformed input at every endpoint. Every answer must be 2xx, 3xx (authorize
 * only) or 4xx, documented for the operation, with a JSON body valid against the documented
 * schema; the sandbox must keep serving afterwards.
 */
import { connect } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../src/index.js";
import { contractProblems } from "./support/contract.js";
import { authorizeQuery, CLIENT_ID, LIMITED_CLIENT_ID, pkce, REDIRECT_URI, signIn, testSandbox } from "./helpers.js";

const sandbox = testSandbox();
const valid = await signIn(sandbox);
const noProfile = sandbox.issueTokens(CLIENT_ID, ["tickets:read"]);
const revoked = sandbox.issueTokens(CLIENT_ID, ["profile:read"]);
await sandbox.app.request("/oauth/revoke", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ token: revoked.accessToken, client_id: CLIENT_ID }),
});

/** Header-safe strings: Latin-1 without control characters, which fetch clients refuse to send. */
const headerText = fc
  .string({ unit: "binary-ascii", maxLength: 80 })
  .map((text) => text.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, "").trim());
const anyText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });

const tokenFieldValue = fc.oneof(
  anyText,
  anyJson,
  fc.constantFrom(
    CLIENT_ID,
    LIMITED_CLIENT_ID,
    REDIRECT_URI,
    valid.refresh_token,
    valid.access_token,
    pkce().verifier,
    "",
    "profile:read",
    "profile:read tickets:write",
  ),
);

const tokenBody = fc.oneof(
  fc.record(
    {
      grant_type: fc.oneof(
        fc.constantFrom(
          "authorization_code",
          "refresh_token",
          "password",
          "client_credentials",
          "",
          "AUTHORIZATION_CODE",
        ),
        anyJson,
      ),
      client_id: tokenFieldValue,
      redirect_uri: tokenFieldValue,
      code: tokenFieldValue,
      code_verifier: tokenFieldValue,
      refresh_token: tokenFieldValue,
      scope: tokenFieldValue,
    },
    { requiredKeys: [] },
  ),
  anyJson,
  fc.dictionary(anyText, anyJson, { maxKeys: 5 }),
);

const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/x-www-form-urlencoded",
  "text/plain",
  "multipart/form-data; boundary=x",
  "",
  "application/json; charset=utf-16",
);

const encodedBody = fc.oneof(
  fc.tuple(tokenBody, contentType).map(([body, type]) => ({ body: JSON.stringify(body) ?? "", type })),
  fc.tuple(tokenBody, contentType).map(([body, type]) => ({
    body:
      typeof body === "object" && body !== null && !Array.isArray(body)
        ? new URLSearchParams(
            Object.entries(body).map(([key, value]) => [
              key,
              typeof value === "string" ? value : (JSON.stringify(value) ?? ""),
            ]),
          ).toString()
        : // an array may hold objects without a prototype, which String() cannot print
          typeof body === "object" && body !== null
          ? JSON.stringify(body)
          : String(body),
    type,
  })),
  fc.tuple(anyText, contentType).map(([body, type]) => ({ body, type })),
);

async function call(path: string, init: RequestInit): Promise<Response> {
  const response = await sandbox.app.request(path, init);
  return response;
}

async function expectDocumented(
  path: string,
  method: string,
  response: Response,
  allowRedirect = false,
): Promise<void> {
  expect(response.status).toBeLessThan(500);
  if (!allowRedirect) expect(response.status === 302).toBe(false);
  expect(await contractProblems(path, method, response)).toEqual([]);
}

describe("fuzz: app.request", () => {
  it("POST /oauth/token answers every random body with a documented 200 or 400", async () => {
    await fc.assert(
      fc.asyncProperty(encodedBody, async ({ body, type }) => {
        const headers: Record<string, string> = type === "" ? {} : { "content-type": type };
        const response = await call("/oauth/token", { method: "POST", headers, body });
        await expectDocumented("/oauth/token", "POST", response);
      }),
      { numRuns: 1500 },
    );
  });

  it("POST /oauth/revoke answers every random body with a documented 200 or 400", async () => {
    const revokeBody = fc.oneof(
      fc.record(
        {
          token: tokenFieldValue,
          client_id: tokenFieldValue,
          token_type_hint: fc.oneof(fc.constantFrom("access_token", "refresh_token", "id_token"), anyJson),
        },
        { requiredKeys: [] },
      ),
      anyJson,
    );
    await fc.assert(
      fc.asyncProperty(revokeBody, contentType, fc.boolean(), async (body, type, asForm) => {
        const text =
          asForm && typeof body === "object" && body !== null && !Array.isArray(body)
            ? new URLSearchParams(
                Object.entries(body).map(([key, value]) => [
                  key,
                  typeof value === "string" ? value : (JSON.stringify(value) ?? ""),
                ]),
              ).toString()
            : (JSON.stringify(body) ?? "");
        const headers: Record<string, string> = type === "" ? {} : { "content-type": type };
        const response = await call("/oauth/revoke", { method: "POST", headers, body: text });
        await expectDocumented("/oauth/revoke", "POST", response);
      }),
      { numRuns: 800 },
    );
  });

  it("GET /oauth/authorize answers every random query with a documented 200, 302 or 400, never redirecting to an unregistered URI", async () => {
    const parameterValue = fc.oneof(
      anyText,
      fc.constantFrom(
        "code",
        "token",
        CLIENT_ID,
        LIMITED_CLIENT_ID,
        "nobody",
        REDIRECT_URI,
        `${REDIRECT_URI}/`,
        "profile:read",
        "tickets:read profile:read",
        "S256",
        "plain",
        pkce().challenge,
        "",
        "%",
        "%zz",
        "%0d%0aSet-Cookie:%20x=1",
      ),
    );
    const names = fc.constantFrom(
      "response_type",
      "client_id",
      "redirect_uri",
      "scope",
      "state",
      "code_challenge",
      "code_challenge_method",
      "extra",
      "",
    );
    const query = fc
      .array(fc.tuple(names, parameterValue, fc.boolean()), { maxLength: 10 })
      .map((pairs) =>
        pairs
          .map(([name, value, raw]) => `${name}=${raw ? value.replace(/[#\s]/g, "") : encodeURIComponent(value)}`)
          .join("&"),
      );
    const biased = fc
      .record({
        overrides: fc.dictionary(names, fc.option(parameterValue, { nil: undefined }), { maxKeys: 3 }),
      })
      .map(({ overrides }) => authorizeQuery(overrides).slice("/oauth/authorize?".length));
    await fc.assert(
      fc.asyncProperty(fc.oneof(query, biased), fc.boolean(), async (search, autoApprove) => {
        sandbox.autoApprove = autoApprove;
        const response = await call(`/oauth/authorize?${search}`, {});
        await expectDocumented("/oauth/authorize", "GET", response, true);
        const location = response.headers.get("location");
        if (location !== null) {
          expect(location).not.toMatch(/[\r\n]/);
          expect(location.startsWith(`${REDIRECT_URI}?`)).toBe(true);
        }
      }),
      { numRuns: 1500 },
    );
    sandbox.autoApprove = true;
  });

  it("GET /api/v1/auth/user answers every random Authorization header with a documented 200, 401 or 403", async () => {
    const header = fc.oneof(
      headerText,
      headerText.map((text) => `Bearer ${text}`),
      fc.constantFrom(
        `Bearer ${valid.access_token}`,
        `Bearer ${noProfile.accessToken}`,
        `Bearer ${revoked.accessToken}`,
        `bearer  ${valid.access_token}`,
        `Bearer ${valid.refresh_token}`,
        "Bearer",
        "Basic x",
        `Bearer ${valid.access_token}x`,
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.option(header, { nil: undefined }), headerText, async (authorization, accept) => {
        const headers: Record<string, string> = { accept };
        if (authorization !== undefined) headers["authorization"] = authorization;
        const response = await call("/api/v1/auth/user", { headers });
        await expectDocumented("/api/v1/auth/user", "GET", response);
        if (response.status === 401) {
          const challenge = response.headers.get("www-authenticate");
          if (authorization === undefined) expect(challenge).not.toContain("error=");
          else expect(challenge).toContain('error="invalid_token"');
        }
      }),
      { numRuns: 800 },
    );
  });

  it("answers any method on any path with a status below 500", async () => {
    const paths = fc.oneof(
      fc.constantFrom(
        "/oauth/authorize",
        "/oauth/token",
        "/oauth/revoke",
        "/api/v1/auth/user",
        "/__sandbox/clock",
        "/__sandbox/events",
        "/__sandbox/consent",
        "/",
        "/api/v1",
        "/oauth/token/",
      ),
      fc.webPath(),
    );
    const methods = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD");
    await fc.assert(
      fc.asyncProperty(paths, methods, fc.option(anyText, { nil: undefined }), async (path, method, body) => {
        const init: RequestInit = { method, headers: { "content-type": "application/json" } };
        if (body !== undefined && method !== "GET" && method !== "HEAD") init.body = body;
        const response = await call(path.startsWith("/") ? path : `/${path}`, init);
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 600 },
    );
  });

  it.each([
    [
      "a prototype-polluting body",
      '{"__proto__":{"grant_type":"authorization_code"},"constructor":{"prototype":{"x":1}}}',
    ],
    ["deeply nested JSON", `${"[".repeat(100_000)}${"]".repeat(100_000)}`],
    ["a byte-order mark before the JSON", `\uFEFF${JSON.stringify({ grant_type: "refresh_token" })}`],
    [
      "a NUL inside grant_type",
      JSON.stringify({ grant_type: "refresh_token\u0000", refresh_token: "x", client_id: CLIENT_ID }),
    ],
    ["a huge number", '{"grant_type":1e999999}'],
    ["duplicate keys", '{"grant_type":"password","grant_type":"refresh_token","refresh_token":"x","client_id":"demo"}'],
    ["a lone surrogate", '{"grant_type":"\\ud800"}'],
    ["70 KB of padding", JSON.stringify({ grant_type: "refresh_token", pad: "x".repeat(70_000) })],
  ])("POST /oauth/token survives %s", async (_name, body) => {
    const response = await call("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    await expectDocumented("/oauth/token", "POST", response);
    expect(response.status).toBe(400);
  });

  it("still works after the fuzzing", async () => {
    const tokens = await signIn(sandbox);
    const response = await call("/api/v1/auth/user", { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(response.status).toBe(200);
  });
});

describe("fuzz: over HTTP on loopback", () => {
  let running: RunningSandbox | undefined;

  beforeAll(async () => {
    running = await startSandbox({ clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], autoApprove: true });
  });
  afterAll(async () => {
    await running?.close();
  });

  it("answers a few hundred random requests with documented statuses and keeps serving", async () => {
    const base = running?.url ?? "";
    const request = fc.oneof(
      encodedBody.map(({ body, type }) => ({ path: "/oauth/token", method: "POST", body, type })),
      encodedBody.map(({ body, type }) => ({ path: "/oauth/revoke", method: "POST", body, type })),
      headerText.map((text) => ({
        path: "/api/v1/auth/user",
        method: "GET",
        body: undefined,
        type: "",
        authorization: `Bearer ${text}`,
      })),
    );
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const headers: Record<string, string> = input.type === "" ? {} : { "content-type": input.type };
        if ("authorization" in input) headers["authorization"] = input.authorization;
        const response = await fetch(`${base}${input.path}`, {
          method: input.method,
          headers,
          ...(input.body === undefined ? {} : { body: input.body }),
        });
        expect(response.status).toBeLessThan(500);
        expect(await contractProblems(input.path, input.method, response)).toEqual([]);
      }),
      { numRuns: 300 },
    );
    expect((await fetch(`${base}/__sandbox/health`)).status).toBe(200);
  });

  it("survives raw malformed HTTP and keeps serving", async () => {
    const port = running?.port ?? 0;
    const raws = [
      "GARBAGE\r\n\r\n",
      'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nContent-Type: application/json\r\n\r\n{"grant_type"',
      "POST /oauth/token HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n",
      "GET /oauth/authorize?%%%% HTTP/1.1\r\nHost: x\r\n\r\n",
      `GET /api/v1/auth/user HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${"a".repeat(20_000)}\r\n\r\n`,
    ];
    for (const raw of raws) {
      await new Promise<void>((resolve) => {
        const socket = connect(port, "127.0.0.1", () => socket.end(raw));
        socket.on("data", (chunk: Buffer) => {
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString())?.[1] ?? "0");
          expect(status === 0 || status < 500).toBe(true);
        });
        socket.on("error", () => resolve());
        socket.on("close", () => resolve());
        socket.setTimeout(2000, () => socket.destroy());
      });
    }
    const tokens = running?.sandbox.issueTokens(CLIENT_ID);
    const response = await fetch(`${running?.url ?? ""}/api/v1/auth/user`, {
      headers: { authorization: `Bearer ${tokens?.accessToken ?? ""}` },
    });
    expect(response.status).toBe(200);
  });
});
