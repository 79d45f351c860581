// Issue 37: every operation sample of the reference runs as written against the sandbox `pnpm start`
// serves, and does what it says, seen from the tenant's side: its event log (`GET /__sandbox/events`)
// and what it answers. For each kit language (test/support/samples.ts: TypeScript, Python, Go, Java;
// one entry more for another), in a fresh home directory, as a reader runs them one after the other on
// the token file they share (~/.config/my-cli/tokens.json):
//
// 1. revokeToken, signed out: says there is nothing to revoke, and sends nothing;
// 2. authorize: prints the authorize URL, the person approves on the consent page, the browser comes
//    back to the loopback redirect and the code is exchanged: one authorization_code grant;
// 3. getAuthenticatedUser: prints the user, with no sign-in and no token request;
// 4. exchangeToken: with a fresh access token, no refresh; run again 14½ minutes later (the stored
//    record received that much earlier, the sandbox's clock moved as far), one refresh_token grant
//    that rotates the stored refresh token;
// 5. revokeToken: one revocation, the stored tokens gone, and the revoked access token refused.
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { DEMO_USER } from "@tenant-integration/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ageStoredTokens,
  freshHome,
  LANGUAGES,
  OPERATIONS,
  preparePrograms,
  runSample,
  SAMPLE_CLIENT,
  SAMPLE_REDIRECT,
  SAMPLE_TENANT,
  sampleSource,
  startedClientSpec,
  startedSandboxPort,
  startLikePnpmStart,
  storedTokens,
  tokenFile,
  type OperationId,
  type SandboxEvent,
  type StartedSandbox,
} from "./support/samples.js";

let sandbox: StartedSandbox;

beforeAll(async () => {
  sandbox = await startLikePnpmStart();
});
afterAll(async () => {
  await sandbox?.close();
});

/** What an event says, without its sequence number. */
const said = ({ endpoint, grantType, clientId, status, outcome }: SandboxEvent) =>
  `${endpoint} ${grantType ?? "-"} ${clientId} ${status} ${outcome}`;

describe("the samples name what `pnpm start` serves", () => {
  it("its sandbox's URL, its command-line client and that client's redirect URI, in every language", () => {
    expect(startedSandboxPort()).toBe(Number(new URL(SAMPLE_TENANT).port));
    expect(startedClientSpec()).toBe(`id=${SAMPLE_CLIENT},redirect=${SAMPLE_REDIRECT}`);
    for (const extension of ["ts", "py", "go", "java", "sh"]) {
      for (const operationId of OPERATIONS) {
        const source = sampleSource(`${operationId}.${extension}`);
        const urls = [...source.matchAll(/https?:\/\/[^/"\s:]+(?::\d+)?/g)]
          .map(([url]) => url)
          .filter((url) => !url.includes("<")); // https://<tenant_host>, the reader's own
        expect(new Set(urls), `${operationId}.${extension}`).toEqual(
          new Set(source.includes("53682") ? [SAMPLE_TENANT, "http://127.0.0.1:53682"] : [SAMPLE_TENANT]),
        );
        // The API call sends only the bearer token: its curl sample names no client.
        if (`${operationId}.${extension}` !== "getAuthenticatedUser.sh")
          expect(source, `${operationId}.${extension}`).toContain(SAMPLE_CLIENT);
        // The reader's way to a real tenant is said beside the sandbox's URL.
        expect(source, `${operationId}.${extension}`).toMatch(/a real tenant:\s*(?:\/\/\s*)?https:\/\/<tenant_host>/);
      }
    }
  });
});

describe.each(LANGUAGES.map((language) => [language.label, language] as const))(
  "the %s samples, run one after the other against pnpm start's sandbox",
  (_label, language) => {
    let programs: Record<OperationId, string[]>;
    let cleanup = () => {};
    let home: string;
    let seen = 0;

    beforeAll(async () => {
      ({ programs, cleanup } = await preparePrograms(language, sandbox));
      home = freshHome();
      seen = (await sandbox.events()).length;
    }, 300_000);
    afterAll(() => {
      cleanup();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    /** Runs one sample in this language's home; returns the run and the events it caused. */
    const run = async (operationId: OperationId) => {
      const result = await runSample(programs[operationId], { HOME: home });
      const events = (await sandbox.events()).slice(seen);
      seen += events.length;
      return { ...result, events: events.map(said) };
    };

    it("revokeToken, signed out: says there is nothing to revoke and sends nothing", async () => {
      const result = await run("revokeToken");
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/Not signed in: there is nothing to revoke/);
      expect(result.events).toEqual([]);
    });

    it("authorize: the person approves at the printed URL; the code comes back and is exchanged once", async () => {
      const result = await run("authorize");
      expect(result.code, result.stderr).toBe(0);
      expect(result.signedIn, result.stdout + result.stderr).toBe(true);
      expect(result.stdout).toMatch(/Signed in/);
      expect(result.events).toEqual([`token authorization_code ${SAMPLE_CLIENT} 200 ok`]);
      expect(storedTokens(home, sandbox)).toMatchObject({ token_type: "Bearer", seq: 0 });
      expect(statSync(tokenFile(home)).mode & 0o777).toBe(0o600);
    });

    it("getAuthenticatedUser: prints the user with the stored tokens, no sign-in, no token request", async () => {
      const result = await run("getAuthenticatedUser");
      expect(result.code, result.stderr).toBe(0);
      expect(result.signedIn).toBe(false);
      expect(result.stdout).toContain(String(DEMO_USER["name"]));
      expect(result.events).toEqual([]);
    });

    it("exchangeToken: no refresh while the access token is fresh; 14½ minutes later, one refresh that rotates", async () => {
      const fresh = await run("exchangeToken");
      expect(fresh.code, fresh.stderr).toBe(0);
      expect(fresh.signedIn).toBe(false);
      expect(fresh.stdout).toMatch(/The access token is valid until/);
      expect(fresh.events).toEqual([]);

      const before = storedTokens(home, sandbox)!;
      ageStoredTokens(home, sandbox, 14 * 60 + 30);
      await sandbox.advance(14 * 60 + 30);
      const later = await run("exchangeToken");
      expect(later.code, later.stderr).toBe(0);
      expect(later.signedIn).toBe(false);
      expect(later.events).toEqual([`token refresh_token ${SAMPLE_CLIENT} 200 ok`]);
      const after = storedTokens(home, sandbox)!;
      expect(after["seq"]).toBe(1);
      expect(after["refresh_token"]).not.toBe(before["refresh_token"]);
      expect(after["access_token"]).not.toBe(before["access_token"]);
    });

    it("revokeToken: revokes at the tenant, clears the stored tokens, and the access token is refused", async () => {
      const accessToken = String(storedTokens(home, sandbox)!["access_token"]);
      const result = await run("revokeToken");
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/Signed out/);
      expect(result.events).toEqual([`revoke - ${SAMPLE_CLIENT} 200 ok`]);
      expect(storedTokens(home, sandbox)).toBeUndefined();
      const user = await fetch(`${sandbox.url}/api/v1/auth/user`, {
        headers: { Authorization: `Bearer ${accessToken}`, Accept: "application/json" },
      });
      expect(user.status).toBe(401);
      expect(existsSync(tokenFile(home)) ? readFileSync(tokenFile(home), "utf8") : "").not.toContain(accessToken);
    });
  },
);

describe("the check itself", () => {
  it("sees a sample that sends nothing: a revoke that skips the tenant leaves no revoke event", async () => {
    const [typescript] = LANGUAGES;
    const home = freshHome();
    const { programs, cleanup } = await preparePrograms(typescript!, sandbox);
    try {
      let seen = (await sandbox.events()).length;
      expect((await runSample(programs.authorize, { HOME: home })).code).toBe(0);
      seen = (await sandbox.events()).length;
      // What issue 37 found: a revoke on a fresh in-memory manager, which forgets locally and exits 0.
      const broken = await preparePrograms(
        {
          ...typescript!,
          prepare: (sources, work) =>
            typescript!.prepare(
              { ...sources, revokeToken: sources.revokeToken.replace(/storage: fileStorage\([^\n]*\n/, "") },
              work,
            ),
        },
        sandbox,
      );
      try {
        const result = await runSample(broken.programs.revokeToken, { HOME: home });
        expect(result.code).toBe(0);
        expect((await sandbox.events()).slice(seen)).toEqual([]);
      } finally {
        broken.cleanup();
      }
    } finally {
      cleanup();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
