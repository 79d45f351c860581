import { describe, expect, it } from "vitest";
import { ClientConfigError, parseClientSpec, parseConfig, validateClient } from "../src/index.js";
import { matchesAnyLoopbackPort } from "../src/clients.js";
import { HELP } from "../src/args.js";
import { authorizeQuery, locationParams, pkce, postJson, testSandbox } from "./helpers.js";

// RFC 8252 §7.3: for loopback IP redirect URIs of native apps the port is chosen at request time.
const NATIVE_V4 = "http://127.0.0.1/callback";
const NATIVE_V6 = "http://[::1]/callback";
const NATIVE_LOCALHOST = "http://localhost/callback";

function sandboxWithNativeClient() {
  return testSandbox({
    clients: [
      { id: "cli", redirectUris: [NATIVE_V4, NATIVE_V6, NATIVE_LOCALHOST, "http://127.0.0.1/q?x=1"], native: true },
      { id: "web", redirectUris: [NATIVE_V4] },
    ],
  });
}

async function authorize(sandbox: ReturnType<typeof testSandbox>, clientId: string, redirectUri: string) {
  return sandbox.app.request(authorizeQuery({ client_id: clientId, redirect_uri: redirectUri }));
}

describe("native clients: loopback IP redirect URIs without a port accept any port (RFC 8252 §7.3)", () => {
  it.each([
    ["127.0.0.1 with a random port", "http://127.0.0.1:51234/callback"],
    ["127.0.0.1 with port 1", "http://127.0.0.1:1/callback"],
    ["127.0.0.1 with port 65535", "http://127.0.0.1:65535/callback"],
    ["[::1] with a random port", "http://[::1]:40000/callback"],
    ["127.0.0.1 with a port and the registered query", "http://127.0.0.1:8123/q?x=1"],
    ["the registered URI itself, without a port", NATIVE_V4],
  ])("redirects to %s with a code", async (_name, requested) => {
    const sandbox = sandboxWithNativeClient();
    const response = await authorize(sandbox, "cli", requested);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")?.startsWith(`${requested}${requested.includes("?") ? "&" : "?"}`)).toBe(
      true,
    );
    expect(locationParams(response).get("code")).toMatch(/.+/);
  });

  it.each([
    ["another path", "http://127.0.0.1:51234/other"],
    ["a trailing slash", "http://127.0.0.1:51234/callback/"],
    ["an added query", "http://127.0.0.1:51234/callback?x=1"],
    ["another query value", "http://127.0.0.1:51234/q?x=2"],
    ["https instead of http", "https://127.0.0.1:51234/callback"],
    ["another loopback address", "http://127.0.0.2:51234/callback"],
    ["localhost, which RFC 8252 §8.3 does not treat as a loopback IP literal", "http://localhost:51234/callback"],
    ["the IPv6 host written out", "http://[0:0:0:0:0:0:0:1]:51234/callback"],
    ["port 0", "http://127.0.0.1:0/callback"],
    ["a port with a leading zero", "http://127.0.0.1:08080/callback"],
    ["a port above 65535", "http://127.0.0.1:65536/callback"],
    ["an empty port", "http://127.0.0.1:/callback"],
    ["a host in upper case", "HTTP://127.0.0.1:51234/callback"],
  ])("still refuses %s with a 400 page", async (_name, requested) => {
    const sandbox = sandboxWithNativeClient();
    const response = await authorize(sandbox, "cli", requested);
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });

  it("exchanges the code for tokens with the same port-bearing redirect_uri, and refuses another port", async () => {
    const sandbox = sandboxWithNativeClient();
    const requested = "http://127.0.0.1:49152/callback";
    const exchange = async (redirectUri: string) => {
      const { verifier, challenge } = pkce();
      const response = await sandbox.app.request(
        authorizeQuery({ client_id: "cli", redirect_uri: requested }, challenge),
      );
      const code = locationParams(response).get("code") ?? "";
      return postJson(sandbox, "/oauth/token", {
        grant_type: "authorization_code",
        client_id: "cli",
        redirect_uri: redirectUri,
        code,
        code_verifier: verifier,
      });
    };
    expect((await exchange(requested)).status).toBe(200);
    const otherPort = await exchange("http://127.0.0.1:49153/callback");
    expect(otherPort.status).toBe(400);
    expect(await otherPort.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("keeps exact matching for a client that is not native", async () => {
    const sandbox = sandboxWithNativeClient();
    expect((await authorize(sandbox, "web", "http://127.0.0.1:51234/callback")).status).toBe(400);
    expect((await authorize(sandbox, "web", NATIVE_V4)).status).toBe(302);
  });

  it("keeps exact matching for a native client's registered URI that has a port", async () => {
    const sandbox = testSandbox({
      clients: [{ id: "cli", redirectUris: ["http://127.0.0.1:8080/callback"], native: true }],
    });
    expect((await authorize(sandbox, "cli", "http://127.0.0.1:9090/callback")).status).toBe(400);
    expect((await authorize(sandbox, "cli", "http://127.0.0.1:8080/callback")).status).toBe(302);
  });
});

describe("matchesAnyLoopbackPort", () => {
  it("only adds a port to a loopback IP literal URI without one", () => {
    expect(matchesAnyLoopbackPort("http://127.0.0.1", "http://127.0.0.1:5000")).toBe(true);
    expect(matchesAnyLoopbackPort("http://127.0.0.1/", "http://127.0.0.1:5000/")).toBe(true);
    expect(matchesAnyLoopbackPort("http://127.0.0.1:80/cb", "http://127.0.0.1:5000/cb")).toBe(false);
    expect(matchesAnyLoopbackPort("http://127.0.0.10/cb", "http://127.0.0.10:5000/cb")).toBe(false);
    expect(matchesAnyLoopbackPort("http://localhost/cb", "http://localhost:5000/cb")).toBe(false);
    expect(matchesAnyLoopbackPort("https://127.0.0.1/cb", "https://127.0.0.1:5000/cb")).toBe(false);
  });
});

describe("registering a native client", () => {
  it("reads the bare native key of a --client spec", () => {
    expect(parseClientSpec("id=cli,redirect=http://127.0.0.1/callback,native")).toEqual({
      id: "cli",
      redirectUris: ["http://127.0.0.1/callback"],
      native: true,
    });
    expect(parseClientSpec("id=web,redirect=http://127.0.0.1/callback").native).toBeUndefined();
  });

  it("reads native from a config file and refuses a value that is not a boolean", () => {
    expect(
      parseConfig({ clients: [{ id: "cli", redirectUris: ["http://127.0.0.1/callback"], native: true }] }).clients?.[0]
        ?.native,
    ).toBe(true);
    expect(() =>
      parseConfig({ clients: [{ id: "cli", redirectUris: ["http://127.0.0.1/callback"], native: "yes" }] }),
    ).toThrow(/native must be true or false/);
    expect(() =>
      validateClient({ id: "cli", redirectUris: ["http://127.0.0.1/callback"], native: 1 as unknown as boolean }),
    ).toThrow(ClientConfigError);
  });
});

describe("exact redirect matching by default (service description §2 and §7)", () => {
  it("refuses another port for a loopback URI registered with a fixed port, and for one registered without a port", async () => {
    const sandbox = testSandbox({
      clients: [{ id: "cli", redirectUris: ["http://127.0.0.1:53682/callback", NATIVE_V4] }],
    });
    expect((await authorize(sandbox, "cli", "http://127.0.0.1:53682/callback")).status).toBe(302);
    expect((await authorize(sandbox, "cli", "http://127.0.0.1:53683/callback")).status).toBe(400);
    expect((await authorize(sandbox, "cli", "http://127.0.0.1:51234/callback")).status).toBe(400);
  });

  it("leaves the port-agnostic option off unless asked, and says in --help that the service is not known to behave so", () => {
    expect(parseClientSpec("id=cli,redirect=http://127.0.0.1/callback").native).toBeUndefined();
    expect(HELP).toMatch(/native\s+optional, off by default/);
    expect(HELP).toMatch(/The service is not known to behave\s+so/);
    expect(HELP).not.toMatch(/--client id=cli,redirect=http:\/\/127\.0\.0\.1\/callback,native/);
  });
});
