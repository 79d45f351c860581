// A one-page browser app for the tests that play several tabs: it serves `program` (an ES module,
// JavaScript) at `/` and at `/callback`, with an import map to the BUILT packages (the token
// manager, the client and what they import), as a user's app would load them, unbundled. Each page
// records what it prints with console.log and console.error in `window.__console`.
import { createRequire } from "node:module";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, normalize } from "node:path";

const require = createRequire(import.meta.url);
const packageDir = (name: string, from = require): string => dirname(from.resolve(`${name}/package.json`));
const tokenManager = packageDir("@tenant-integration/token-manager");
const client = packageDir("@tenant-integration/client");

/** Where each bare specifier's modules are served from, and the file the specifier names. */
const MODULES: Record<string, { dir: string; entry: string }> = {
  "@tenant-integration/token-manager": { dir: join(tokenManager, "dist"), entry: "index.js" },
  "@tenant-integration/client": { dir: join(client, "dist"), entry: "index.js" },
  // The rules the client and the token manager share, a package both import (packages/internal).
  "@tenant-integration/internal": {
    dir: join(packageDir("@tenant-integration/internal", createRequire(join(tokenManager, "package.json"))), "dist"),
    entry: "index.js",
  },
  "@tenant-integration/types": {
    dir: join(packageDir("@tenant-integration/types", createRequire(join(tokenManager, "package.json"))), "dist"),
    entry: "index.js",
  },
  "openapi-fetch": {
    dir: join(packageDir("openapi-fetch", createRequire(join(client, "package.json"))), "dist"),
    entry: "index.mjs",
  },
};
const slug = (name: string): string => name.replace(/^@tenant-integration\//, "");

const IMPORT_MAP = JSON.stringify({
  imports: Object.fromEntries(
    Object.entries(MODULES).map(([name, { entry }]) => [name, `/modules/${slug(name)}/${entry}`]),
  ),
});

// Kept to plain JSON values, so that a test can read them with page.evaluate.
const RECORD_CONSOLE = `window.__console = [];
for (const level of ["log", "error"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    window.__console.push([level, ...args.map((a) => { try { return JSON.parse(JSON.stringify(a)); } catch { return String(a); } })]);
    original(...args);
  };
}`;

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tab</title>
<script type="importmap">${IMPORT_MAP}</script>
<script>${RECORD_CONSOLE}</script>
<script type="module" src="/app.js"></script></head><body></body></html>`;

export interface TabApp {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the app on 127.0.0.1 at a port chosen at run time. `program` is given the app's URL (its
 * redirect URI is `<url>/callback`), known only once the server listens.
 */
export async function serveTabApp(program: (appUrl: string) => string): Promise<TabApp> {
  let source = "";
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const send = (status: number, type: string, body: string | Buffer): void =>
      void res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" }).end(body);
    const [, name, rest] = /^\/modules\/([^/]+)\/(.+)$/.exec(path) ?? [];
    const module = Object.entries(MODULES).find(([specifier]) => slug(specifier) === name)?.[1];
    const file = module && rest ? normalize(join(module.dir, rest)) : undefined;
    if (path === "/" || path === "/callback") send(200, "text/html; charset=utf-8", PAGE);
    else if (path === "/app.js") send(200, "text/javascript; charset=utf-8", source);
    else if (!module || !file?.startsWith(module.dir) || !/\.m?js$/.test(file)) send(404, "text/plain", "not found");
    else
      readFile(file).then(
        (body) => send(200, "text/javascript; charset=utf-8", body),
        () => send(404, "text/plain", "not found"),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  source = program(url);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
