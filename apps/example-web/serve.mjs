#!/usr/bin/env node
// A tiny static server for the built app (dist/): files as they are, index.html for every other
// path (so /callback works), and the tenant URL and client id written into index.html at run time.
// `node serve.mjs` reads PORT, HOST, TENANT_URL and CLIENT_ID from the environment.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const DIST = fileURLToPath(new URL("./dist/", import.meta.url));

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".map": "application/json",
};

const escapeAttribute = (value) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/**
 * Serves the built example web app.
 *
 * @param {import("./serve.d.ts").ServeExampleWebOptions} [options]
 * @returns {Promise<import("./serve.d.ts").ExampleWebServer>}
 */
export async function serveExampleWeb(options = {}) {
  const { port = 5173, host = "127.0.0.1", tenantUrl, clientId, root = DIST } = options;
  let index;
  try {
    index = await readFile(join(root, "index.html"), "utf8");
  } catch {
    throw new Error(`No build at ${root}: run \`pnpm --filter @tenant-integration/example-web build\` first`);
  }
  const metas = [
    tenantUrl === undefined
      ? ""
      : `<meta name="tenant-integration:tenant-url" content="${escapeAttribute(String(tenantUrl))}" />`,
    clientId === undefined
      ? ""
      : `<meta name="tenant-integration:client-id" content="${escapeAttribute(String(clientId))}" />`,
  ].join("");
  const html = index.replace("</head>", `${metas}</head>`);

  const server = createServer(async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    let path;
    try {
      path = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    const file = normalize(join(root, path));
    if (file.startsWith(root.endsWith(sep) ? root : root + sep) && extname(file) !== "" && extname(file) !== ".html") {
      try {
        const body = await readFile(file);
        res.writeHead(200, {
          "Content-Type": TYPES[extname(file)] ?? "application/octet-stream",
          "Cache-Control": path.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
        });
        res.end(req.method === "HEAD" ? undefined : body);
        return;
      } catch {
        res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("Not found");
        return;
      }
    }
    // Any page path (/, /callback, …): the app decides what to show.
    res.writeHead(200, {
      "Content-Type": TYPES[".html"],
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
    });
    res.end(req.method === "HEAD" ? undefined : html);
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const actualPort = server.address().port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${actualPort}`,
    port: actualPort,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const env = process.env;
  const running = await serveExampleWeb({
    port: Number(env.PORT ?? 5173),
    host: env.HOST ?? "127.0.0.1",
    tenantUrl: env.TENANT_URL ?? "http://127.0.0.1:4020",
    clientId: env.CLIENT_ID ?? "demo",
  });
  console.log(`example-web listening on ${running.url}`);
  const stop = () => void running.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
