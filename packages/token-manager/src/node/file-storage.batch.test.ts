/**
 * A token file shared by many sessions: the writes that come while a rewrite runs are gathered into
 * the next one, so a process's many sessions cost one lock and one rewrite per batch, not one each.
 * Without it, 200 sessions of 5 processes expiring together waited past the write lock's bound
 * (LOCK_TIMEOUT in 4 of 5 processes); see the token manager's README, "A server acting for many users".
 */
import { mkdtempSync, readFileSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { fileStorage } from "./file-storage.js";

vi.mock("node:fs/promises", async (original) => {
  const actual = await original<typeof import("node:fs/promises")>();
  return { ...actual, rename: vi.fn(actual.rename) };
});

describe("fileStorage writes of many sessions at once", () => {
  it("are gathered into few rewrites, every change kept and durable when its call resolves", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "ti-batch-")), "tokens.json");
    const storage = fileStorage(file);
    const renames = vi.mocked(fsp.rename);
    renames.mockClear();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => storage.set(`tenant-integration:o:c:s${i}:tokens`, `v${i}`)),
    );
    const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
    expect(Object.keys(data)).toHaveLength(50);
    expect(data["tenant-integration:o:c:s49:tokens"]).toBe("v49");
    expect(renames.mock.calls.length).toBeLessThanOrEqual(3);
  });

  it("apply the changes of one batch in the order they came, a take seeing the set before it", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "ti-batch-")), "tokens.json");
    const storage = fileStorage(file);
    const key = "tenant-integration:o:c:pending:0f007385b6f9d4b7eeb2748605afe1a9";
    const [, taken, again] = await Promise.all([storage.set(key, "first"), storage.take!(key), storage.take!(key)]);
    expect([taken, again]).toEqual(["first", undefined]);
  });
});
