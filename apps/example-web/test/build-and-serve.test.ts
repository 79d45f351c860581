// The production build and its static server, without a browser.
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serveExampleWeb, type ExampleWebServer } from "@tenant-integration/example-web/serve";
import { afterEach, describe, expect, it } from "vitest";

const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
let web: ExampleWebServer | undefined;

afterEach(async () => {
  await web?.close();
  web = undefined;
});

describe("the production build", () => {
  it("has no node: import and loads nothing from another host", async () => {
    const assets = await readdir(join(dist, "assets"));
    const scripts = assets.filter((name) => name.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(0);
    for (const name of scripts) expect(await readFile(join(dist, "assets", name), "utf8")).not.toMatch(/["']node:/);
    const html = await readFile(join(dist, "index.html"), "utf8");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});

describe("serveExampleWeb", () => {
  it("serves index.html for /callback with the tenant URL and client id written in, escaped", async () => {
    web = await serveExampleWeb({ port: 0, tenantUrl: "http://127.0.0.1:4020", clientId: 'a"<b' });
    const response = await fetch(`${web.url}/callback?code=x&state=y`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const html = await response.text();
    expect(html).toContain('<meta name="tenant-integration:tenant-url" content="http://127.0.0.1:4020" />');
    expect(html).toContain('<meta name="tenant-integration:client-id" content="a&quot;&lt;b" />');
  });

  it("serves built assets with their type, answers 404 for a missing one, and never serves files outside dist", async () => {
    web = await serveExampleWeb({ port: 0 });
    const script = (await readdir(join(dist, "assets"))).find((name) => name.endsWith(".js"));
    const asset = await fetch(`${web.url}/assets/${script}`);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await fetch(`${web.url}/assets/missing.js`)).status).toBe(404);
    const outside = await fetch(`${web.url}/..%2F..%2Fpackage.json`);
    expect(await outside.text()).toContain("<!doctype html>");
    expect((await fetch(`${web.url}/`, { method: "POST" })).status).toBe(405);
  });

  it("leaves the build's own configuration in place when no tenant URL is given", async () => {
    web = await serveExampleWeb({ port: 0 });
    expect(await (await fetch(web.url)).text()).not.toContain("tenant-integration:tenant-url");
  });
});
