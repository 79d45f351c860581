/**
 * `followSandboxClock`: a process that did not start the sandbox (here: a token manager that knows
 * only its URL) follows the test clock that another process moves over HTTP.
 */
import { createTokenManager } from "@tenant-integration/token-manager";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type RunningSandbox, startSandbox } from "../src/start.js";
import { followSandboxClock, type FollowedSandboxClock, TestTenantError } from "../src/testing.js";

const REDIRECT = "http://127.0.0.1:53682/callback";
let running: RunningSandbox | undefined;
let clock: FollowedSandboxClock | undefined;

afterEach(async () => {
  clock?.close();
  await running?.close();
  running = clock = undefined;
});

/** Moves the sandbox's clock as another process does: over HTTP. */
const advance = async (url: string, seconds: number) => {
  const answer = await fetch(`${url}/__sandbox/clock`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ advanceSeconds: seconds }),
  });
  expect(answer.status).toBe(200);
};

/** How far `now` is ahead of the wall clock, in whole seconds. */
const ahead = (now: () => number) => Math.round((now() - Date.now()) / 1000);

describe("followSandboxClock", () => {
  it("follows the moves of another process: at once after sync(), and within an interval without it", async () => {
    running = await startSandbox({
      autoApprove: true,
      testClock: true,
      clients: [{ id: "cli", redirectUris: [REDIRECT] }],
    });
    clock = await followSandboxClock(running.url, { intervalMs: 20 });
    const tokenManager = createTokenManager({
      baseUrl: running.url,
      clientId: "cli",
      redirectUri: REDIRECT,
      scopes: ["profile:read"],
      now: clock.now,
    });
    const { url } = await tokenManager.beginAuthorization();
    const approved = await fetch(url, { redirect: "manual" });
    await tokenManager.completeAuthorization(new URL(approved.headers.get("location") ?? "", url));

    await advance(running.url, 16 * 60);
    await clock.sync();
    expect(ahead(clock.now)).toBe(16 * 60);
    await tokenManager.getAccessToken(); // past the 15 minutes on this process's clock too: refreshed
    expect(running.sandbox.events().filter((e) => e.grantType === "refresh_token" && e.outcome === "ok")).toHaveLength(
      1,
    );

    await advance(running.url, 60 * 60);
    const followed = clock;
    await vi.waitFor(() => expect(ahead(followed.now)).toBe(76 * 60), { timeout: 10_000, interval: 10 });
  });

  it("rejects with SANDBOX_FAILED for a sandbox without its test clock", async () => {
    running = await startSandbox({});
    await expect(followSandboxClock(running.url)).rejects.toMatchObject({
      name: "TestTenantError",
      code: "SANDBOX_FAILED",
    });
    await expect(followSandboxClock(running.url)).rejects.toBeInstanceOf(TestTenantError);
  });
});
