import { describe, expect, it } from "vitest";
import { startSandbox } from "../src/index.js";

describe("startSandbox", () => {
  it("listens on a free loopback port by default and resolves its URL", async () => {
    const running = await startSandbox();
    try {
      expect(running.host).toBe("127.0.0.1");
      expect(running.port).toBeGreaterThan(0);
      expect(running.url).toBe(`http://127.0.0.1:${running.port}`);
      expect((await fetch(`${running.url}/__sandbox/health`)).status).toBe(200);
    } finally {
      await running.close();
    }
    await expect(fetch(`${running.url}/__sandbox/health`)).rejects.toThrow();
  });

  it("rejects when the port is taken", async () => {
    const first = await startSandbox();
    try {
      await expect(startSandbox({ port: first.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });

  // Regression: @hono/node-server replaces the global Request and Response by default, after which
  // a fetch Response in the same process failed openapi-fetch's `instanceof Response` check.
  it("leaves the process's global Request and Response alone", async () => {
    const before = { Request: globalThis.Request, Response: globalThis.Response };
    const running = await startSandbox();
    try {
      await fetch(`${running.url}/__sandbox/health`);
      expect(globalThis.Response).toBe(before.Response);
      expect(globalThis.Request).toBe(before.Request);
      expect((await fetch(`${running.url}/__sandbox/health`)) instanceof Response).toBe(true);
    } finally {
      await running.close();
    }
  });

  it("closes with keep-alive connections open", async () => {
    const running = await startSandbox();
    expect((await fetch(`${running.url}/__sandbox/health`, { keepalive: true })).status).toBe(200);
    await expect(running.close()).resolves.toBeUndefined();
  });
});
