// A static file server for dist/ on a loopback port chosen at run time, as `pnpm start` serves it.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize } from "node:path";

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

export interface StaticServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `root` on 127.0.0.1; unknown paths without an extension get index.html (Redoc's routes). */
export async function serveStatic(root: string): Promise<StaticServer> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname)).replace(
      /^(\.\.[/\\])+/,
      "",
    );
    const file =
      path.endsWith("/") || extname(path) === ""
        ? join(root, path.endsWith("/") ? path : "", "index.html")
        : join(root, path);
    readFile(file.startsWith(root) ? file : join(root, "index.html"))
      .then((body) =>
        res.writeHead(200, { "Content-Type": types[extname(file)] ?? "application/octet-stream" }).end(body),
      )
      .catch(() => res.writeHead(404).end("not found"));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
