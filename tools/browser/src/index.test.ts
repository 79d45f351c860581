import { describe, expect, it } from "vitest";
import { CHROMIUM_FLAGS, ChromiumNotFoundError, DEBIAN_CHROMIUM_PATH, findChromium, launchChromium } from "./index.js";

describe("findChromium", () => {
  it("prefers CHROMIUM_PATH when it names an executable", () => {
    const path = findChromium({
      env: { CHROMIUM_PATH: "/opt/chromium/chrome" },
      isExecutable: (p) => p === "/opt/chromium/chrome",
    });
    expect(path).toBe("/opt/chromium/chrome");
  });

  it("refuses a CHROMIUM_PATH that is not an executable instead of falling back silently", () => {
    expect(() => findChromium({ env: { CHROMIUM_PATH: "/nope" }, isExecutable: () => false })).toThrow(
      ChromiumNotFoundError,
    );
  });

  it("uses Debian's /usr/bin/chromium without installing anything", () => {
    const calls: string[] = [];
    const path = findChromium({
      env: {},
      isExecutable: (p) => p === DEBIAN_CHROMIUM_PATH,
      run: (cmd, args) => (calls.push([cmd, ...args].join(" ")), 0),
    });
    expect(path).toBe(DEBIAN_CHROMIUM_PATH);
    expect(calls).toEqual([]);
  });

  it("installs Debian's chromium with apt-get when missing and running as root", () => {
    const calls: string[] = [];
    let installed = false;
    const path = findChromium({
      env: {},
      isRoot: true,
      isExecutable: (p) => installed && p === DEBIAN_CHROMIUM_PATH,
      run: (cmd, args) => {
        calls.push([cmd, ...args].join(" "));
        if (args[0] === "install") installed = true;
        return 0;
      },
    });
    expect(path).toBe(DEBIAN_CHROMIUM_PATH);
    expect(calls).toEqual(["apt-get update", "apt-get install -y chromium"]);
  });

  it("throws a clear error when missing and not root, without running apt-get", () => {
    const calls: string[] = [];
    const find = () =>
      findChromium({ env: {}, isRoot: false, isExecutable: () => false, run: (cmd) => (calls.push(cmd), 0) });
    expect(find).toThrow(/No Chromium at \/usr\/bin\/chromium.*CHROMIUM_PATH/);
    expect(calls).toEqual([]);
  });

  it("reports a failed apt-get with its exit status", () => {
    const find = () =>
      findChromium({
        env: {},
        isRoot: true,
        isExecutable: () => false,
        run: (_cmd, args) => (args[0] === "update" ? 100 : 0),
      });
    expect(find).toThrow(
      expect.objectContaining({ code: "CHROMIUM_NOT_FOUND", message: expect.stringContaining("exit 100") }),
    );
  });
});

describe("launchChromium", () => {
  it("starts the system Chromium headless with the offline flags", async () => {
    expect(CHROMIUM_FLAGS).toEqual(
      expect.arrayContaining(["--headless", "--no-sandbox", "--disable-background-networking", "--disable-quic"]),
    );
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.setContent("<h1>offline</h1>");
      expect(await page.textContent("h1")).toBe("offline");
      expect(browser.version()).toMatch(/^\d+\./);
    } finally {
      await browser.close();
    }
  });
});
