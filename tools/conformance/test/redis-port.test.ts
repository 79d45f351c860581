// The suite's redis-servers start on ports that were free when asked. Another process may take such
// a port before redis-server binds it: the server then exits, and a cluster node or a server started
// on a free port is started again on another one (a fresh-clone CI lost the whole scenario file to a
// cluster node's bus port taken this way).
import { createServer, type Server } from "node:net";
import { findRedisServer, isPortTaken, spawnRedisServer } from "@tenant-integration/test-support/redis-server";
import { afterEach, describe, expect, it } from "vitest";

const redis = findRedisServer();
let holder: Server | undefined;

afterEach(() => holder?.close());

describe.skipIf(!redis && !process.env.CI)("a redis-server whose port another process took", () => {
  it("is told apart from other failures, so that it is started again on another port", async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder?.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as { port: number }).port;
    const error = await spawnRedisServer(redis?.command ?? "redis-server", [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
    ]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isPortTaken(error)).toBe(true);
    expect(isPortTaken(new Error("redis-server did not start within 15000 ms:\n"))).toBe(false);
  });
});
