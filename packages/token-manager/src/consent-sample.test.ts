/**
 * The README's headless consent sample, run as written against a sandbox server that shows its
 * consent page (no --auto-approve): it finds the form's `request_id`, posts `decision=approve`, and
 * the callback URL it returns completes the sign-in. Guards the field names the README documents
 * (issue 20: a headless driver needed them and found them nowhere).
 */
import { fileURLToPath } from "node:url";
import { readmeSamples } from "@tenant-integration/readme-samples";
import { toJavaScript } from "@tenant-integration/readme-samples/run";
import { describe, expect, it, onTestFinished } from "vitest";
import { createTokenManager } from "./token-manager.js";
import { startSandboxProcess } from "./test-support/processes.js";

const README = fileURLToPath(new URL("../README.md", import.meta.url));
const REDIRECT_URI = "http://127.0.0.1:53682/callback";

/** The sample as a module of its own. */
async function sample(): Promise<(authorizeUrl: string) => Promise<string>> {
  const source = readmeSamples(README).find((s) => s.includes("/__sandbox/consent")) ?? "";
  expect(source).toContain("approveWithoutBrowser");
  const module = (await import(`data:text/javascript,${encodeURIComponent(toJavaScript(source))}`)) as {
    approveWithoutBrowser: (authorizeUrl: string) => Promise<string>;
  };
  return module.approveWithoutBrowser;
}

describe("the README's consent form sample", () => {
  it("approves on the sandbox's consent page without a browser, and the callback it returns signs in", async () => {
    const sandbox = await startSandboxProcess("consent-cli", REDIRECT_URI, { autoApprove: false });
    onTestFinished(() => sandbox.close());
    const approveWithoutBrowser = await sample();
    const tm = createTokenManager({
      baseUrl: sandbox.url,
      clientId: "consent-cli",
      redirectUri: REDIRECT_URI,
      scopes: ["profile:read"],
    });

    const callback = await approveWithoutBrowser((await tm.beginAuthorization()).url);

    expect(callback.startsWith(`${REDIRECT_URI}?code=`)).toBe(true);
    await tm.completeAuthorization(callback);
    expect(await tm.isSignedIn()).toBe(true);
    expect((await sandbox.events()).map((e) => [e.grantType, e.outcome])).toEqual([["authorization_code", "ok"]]);
  });
});
