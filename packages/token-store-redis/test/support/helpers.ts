/**
 * Shared pieces of the Redis suites: connected clients on the run's redis-server, a command-counting
 * wrapper, and a token manager signed in against an in-process sandbox.
 */
import { createClient } from "redis";
import { createSandbox } from "@tenant-integration/sandbox";
import { signedInKit } from "@tenant-integration/test-support/signed-in";
import { createTokenManager } from "@tenant-integration/token-manager";
import { inject, onTestFinished } from "vitest";
import type { RedisClientLike } from "../../src/index.js";

/** A connected client to the run's redis-server, closed when the test ends. */
export async function connect(url = inject("redisUrl")) {
  const client = createClient({ url });
  // node-redis emits connection errors as events; without a listener they would crash the worker.
  client.on("error", () => {});
  await client.connect();
  onTestFinished(() => client.close());
  return client;
}

/** A prefix no other test uses, so that tests sharing the server never share keys. */
export const uniquePrefix = (): string => `test-${crypto.randomUUID()}:`;

/** A client that records the name of every command it sends (the wrapper the README mentions). */
export function counting(client: RedisClientLike): RedisClientLike & { readonly commands: string[] } {
  const commands: string[] = [];
  return {
    commands,
    sendCommand(args, options) {
      commands.push(args[0]!);
      return client.sendCommand(args, options);
    },
  };
}

/** An in-process sandbox, and token managers signed in against it (`signIn`). */
export const { inProcessSandbox, managerFor, signIn } = signedInKit({ createSandbox, createTokenManager });
