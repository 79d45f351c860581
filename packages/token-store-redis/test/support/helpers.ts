/**
 * Shared pieces of the Redis suites: connected clients on the run's redis-server, a command-counting
 * wrapper, and a token manager signed in against an in-process sandbox.
 */
import { createClient } from "redis";
import { createSandbox } from "@tenant-integration/sandbox";
import { createTokenManager, type TokenManagerOptions, type TokenStorage } from "@tenant-integration/token-manager";
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

const REDIRECT = "http://127.0.0.1:53682/callback";
const CLIENT = "fleet-demo";

/** An in-process sandbox (auto-approve) and a fetch that sends to it. */
export function inProcessSandbox() {
  const sandbox = createSandbox({ clients: [{ id: CLIENT, redirectUris: [REDIRECT] }], autoApprove: true });
  const fetch = async (input: string | URL | Request, init?: RequestInit) => sandbox.fetch(new Request(input, init));
  return { sandbox, fetch };
}

/** A token manager for the in-process sandbox, on `storage`, with a clock the test can move. */
export function managerFor(
  storage: TokenStorage,
  sandbox: ReturnType<typeof inProcessSandbox>,
  clock = { offsetMs: 0 },
  more: Partial<TokenManagerOptions> = {},
) {
  return createTokenManager({
    ...more,
    baseUrl: "http://127.0.0.1:4020",
    clientId: CLIENT,
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage,
    fetch: sandbox.fetch,
    now: () => Date.now() + clock.offsetMs,
  });
}

/** Signs `tm` in: the sandbox approves at once, so its 302 carries the code. */
export async function signIn(
  tm: ReturnType<typeof managerFor>,
  sandbox: ReturnType<typeof inProcessSandbox>,
): Promise<void> {
  const { url } = await tm.beginAuthorization();
  const approved = await sandbox.fetch(url, { redirect: "manual" });
  await tm.completeAuthorization(approved.headers.get("location") ?? "");
}
