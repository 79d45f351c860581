import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTokenManager } from "../token-manager.js";
import { BASE, CLIENT_ID, REDIRECT_URI, recordingFetch, tokenServer, signIn } from "../testing/harness.js";
import { fileStorage } from "./file-storage.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "token-manager-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("fileStorage", () => {
  it("treats an absent file as empty storage", async () => {
    expect(await fileStorage(join(dir, "none.json")).get("k")).toBeUndefined();
  });

  it("reads back what it wrote, across instances, and forgets deleted keys", async () => {
    const path = join(dir, "nested", "tokens.json");
    await fileStorage(path).set("a", "1");
    await fileStorage(path).set("b", "2");
    const again = fileStorage(path);
    expect([await again.get("a"), await again.get("b")]).toEqual(["1", "2"]);
    await again.delete("a");
    expect(await fileStorage(path).get("a")).toBeUndefined();
    expect(await fileStorage(path).get("b")).toBe("2");
  });

  it("writes the file with mode 0600 in a directory of mode 0700", async () => {
    const path = join(dir, "cfg", "tokens.json");
    await fileStorage(path).set("k", "v");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "cfg"))).mode & 0o777).toBe(0o700);
  });

  it("replaces the file atomically and leaves no temporary file behind", async () => {
    const path = join(dir, "tokens.json");
    const s = fileStorage(path);
    await Promise.all(Array.from({ length: 25 }, (_, i) => s.set(`k${i}`, `v${i}`)));
    expect(await readdir(dir)).toEqual(["tokens.json"]);
    const data = JSON.parse(await readFile(path, "utf8")) as Record<string, string>;
    expect(Object.keys(data)).toHaveLength(25);
  });

  it("tightens the mode of an existing file on the next write", async () => {
    const path = join(dir, "tokens.json");
    await writeFile(path, "{}", { mode: 0o644 });
    await fileStorage(path).set("k", "v");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("rejects when the file is not readable JSON, so that the manager reports STORAGE_FAILED", async () => {
    const path = join(dir, "tokens.json");
    await writeFile(path, "not json");
    await expect(fileStorage(path).get("k")).rejects.toThrow();
  });

  it("keeps a command-line session across manager instances", async () => {
    const path = join(dir, "tokens.json");
    const server = tokenServer();
    const { fetch } = recordingFetch((c) => server.handler(c));
    const options = { baseUrl: BASE, clientId: CLIENT_ID, redirectUri: REDIRECT_URI, scopes: ["profile:read" as const], fetch };
    await signIn(createTokenManager({ ...options, storage: fileStorage(path) }));
    expect(await createTokenManager({ ...options, storage: fileStorage(path) }).getAccessToken()).toBe("at_1");
  });
});
