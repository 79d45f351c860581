import { describe, expect, it } from "vitest";
import { memoryStorage } from "./memory.js";
import type { TokenStorage } from "./storage.js";
import { webStorage, type WebStorageLike } from "./web.js";

function fakeWebStorage(): WebStorageLike & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k),
  };
}

describe.each<[string, () => TokenStorage]>([
  ["memoryStorage", () => memoryStorage()],
  ["webStorage", () => webStorage(fakeWebStorage())],
])("%s", (_name, make) => {
  it("reads back what it wrote, and nothing after delete", async () => {
    const s = make();
    expect(await s.get("k")).toBeFalsy();
    await s.set("k", "v1");
    await s.set("k", "v2");
    expect(await s.get("k")).toBe("v2");
    await s.delete("k");
    expect(await s.get("k")).toBeFalsy();
    await s.delete("absent");
  });

  it("keeps keys apart", async () => {
    const s = make();
    await s.set("a", "1");
    await s.set("b", "2");
    expect([await s.get("a"), await s.get("b")]).toEqual(["1", "2"]);
  });
});

describe("webStorage", () => {
  it("writes through to the Web Storage object", async () => {
    const backing = fakeWebStorage();
    await webStorage(backing).set("k", "v");
    expect(backing.map.get("k")).toBe("v");
  });

  it("turns a throwing setItem (quota exceeded) into a rejection", async () => {
    const backing = {
      ...fakeWebStorage(),
      setItem: () => {
        throw new DOMException("full", "QuotaExceededError");
      },
    };
    await expect(webStorage(backing).set("k", "v")).rejects.toThrow("full");
  });
});
