// The quick-start snippets of the guides are compiled against the built token manager and client,
// so a renamed export or option breaks `pnpm test` instead of a reader's first hour; the Node
// snippet also runs against a sandbox, as a reader would run it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@tenant-integration/prism-testing";
import { approveInBrowser, programDirectory, runProgram, toJavaScript } from "@tenant-integration/readme-samples/run";
import { DEMO_USER, startSandbox } from "@tenant-integration/sandbox";
import { describe, expect, it } from "vitest";
import { codeBlocks, section } from "./support/contract.js";
import { typecheckSnippet } from "./support/typecheck.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const typecheck = (name: string, source: string): string => typecheckSnippet("quick-start", name, source);

/** The first TypeScript block under the quick start's heading `### <heading>`. */
function snippetUnder(heading: string): string {
  const guide = section("Quick start");
  return codeBlocks(guide.slice(guide.indexOf(`### ${heading}`)), "ts")[0] ?? "";
}

const NODE_HEADING = "In Node (a command-line tool)";

describe("the quick start", () => {
  it.each([
    ["browser", "In the browser"],
    ["node", NODE_HEADING],
  ])("compiles the %s snippet against the built packages", (name, heading) => {
    const snippet = snippetUnder(heading);
    expect(snippet).toContain("createTokenManager(");
    expect(snippet).toContain('client.GET("/api/v1/auth/user")');
    expect(typecheck(name, snippet!)).toBe("");
  });

  it("says that its http URL is the local sandbox's, and that the service is https only", () => {
    const guide = section("Quick start");
    expect(guide).toMatch(/sandbox serves plain `http` on the\s+loopback interface only/);
    expect(guide).toMatch(/`https:\/\/<tenant_host>` \(the contract's one server is https only\)/);
    for (const snippet of codeBlocks(guide, "ts"))
      expect(snippet).toContain('"http://127.0.0.1:4020"; // the local sandbox; a real tenant: https://<tenant_host>');
  });

  it("starts the sandbox with the clients the snippets use", () => {
    const [command] = codeBlocks(section("Quick start"), "sh");
    expect(command).toContain("tenant-sandbox --port 4020");
    expect(command).toContain("--client id=demo,redirect=http://localhost:5173/callback");
    expect(command).toContain("--client id=demo-cli,redirect=http://127.0.0.1:53682/callback");
  });

  it("runs the Node snippet against the sandbox: it signs in and prints the user, and a second run keeps its tokens", async () => {
    const snippet = snippetUnder(NODE_HEADING);
    const [tenant, redirect] = ["http://127.0.0.1:4020", "http://127.0.0.1:53682/callback"];
    expect(snippet).toContain(`"${tenant}"`);
    expect(snippet).toContain(`"${redirect}"`);
    // The reader's sandbox, on free ports rather than the snippet's fixed ones (other tests use them).
    const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
    const sandbox = await startSandbox({
      port: 0,
      clients: [{ id: "demo-cli", redirectUris: [redirectUri] }],
      autoApprove: true,
    });
    const dir = programDirectory(docsDir, "quick-start-");
    const home = mkdtempSync(join(tmpdir(), "quick-start-home-"));
    try {
      const source = toJavaScript(snippet.replaceAll(tenant, sandbox.url).replaceAll(redirect, redirectUri));
      const run = await runProgram({
        dir,
        name: "quick-start",
        source,
        env: { HOME: home },
        openAuthorizeUrl: approveInBrowser,
      });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.openedAuthorizeUrl).toBe(true);
      expect(run.stdout).toContain(String(DEMO_USER["name"]));
      expect(run.stdout).not.toContain("failed:");
      // The second run reads the token file: no browser, no sign-in, the same user.
      const again = await runProgram({
        dir,
        name: "quick-start",
        source,
        env: { HOME: home },
        openAuthorizeUrl: approveInBrowser,
      });
      expect(again.stderr).toBe("");
      expect(again.code).toBe(0);
      expect(again.openedAuthorizeUrl, again.stdout).toBe(false);
      expect(again.stdout).toContain(String(DEMO_USER["name"]));
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  });
});
