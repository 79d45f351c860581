/**
 * The sandbox's JSON config file (`--config sandbox.json`).
 *
 * @module
 */
import { ClientConfigError, validateClient, type ClientRegistration } from "./clients.js";
import { scopes as knownScopes } from "@tenant-integration/types";
import { MAX_ROTATION_GRACE_SECONDS } from "./tokens.js";
import { HostConfigError, normalizeHostname } from "./hosts.js";
import { SandboxUsers, UserConfigError, type UserRecord } from "./users.js";

/** The fields of a config file; every one is optional. */
export interface SandboxConfig {
  port?: number;
  host?: string;
  autoApprove?: boolean;
  testClock?: boolean;
  clients?: ClientRegistration[];
  /** The users who can sign in: their records (each with an `id`; the first is the default), or how many demo users. */
  users?: UserRecord[] | number;
  defaultScopes?: string[];
  /** As `--state-file`: where clients, codes, tokens and the test clock are kept across restarts. */
  stateFile?: string;
  /** As `--rotation-grace`: seconds a just-rotated refresh token still gets its successor (default 0). */
  rotationGraceSeconds?: number;
  /** As `--allowed-host`: host names answered besides the loopback names and `host`. */
  allowedHosts?: string[];
}

const FIELDS = [
  "$schema",
  "port",
  "host",
  "autoApprove",
  "testClock",
  "clients",
  "users",
  "defaultScopes",
  "stateFile",
  "rotationGraceSeconds",
  "allowedHosts",
];
const CLIENT_FIELDS = ["id", "redirectUris", "scopes", "native"];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringList(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    throw new ClientConfigError(`${what} must be a list of strings`);
  }
  return value as string[];
}

/**
 * Checks a parsed config file and returns it typed.
 *
 * @throws ClientConfigError naming the first invalid or unknown field.
 * @example parseConfig(JSON.parse(await readFile("sandbox.json", "utf8")))
 * @see RFC 6749 §2 (client registration)
 */
export function parseConfig(input: unknown): SandboxConfig {
  if (!isObject(input)) throw new ClientConfigError("the config must be a JSON object");
  for (const key of Object.keys(input)) {
    if (!FIELDS.includes(key))
      throw new ClientConfigError(`unknown config field "${key}" (fields: ${FIELDS.slice(1).join(", ")})`);
  }
  const config: SandboxConfig = {};
  const {
    port,
    host,
    autoApprove,
    testClock,
    clients,
    users,
    defaultScopes,
    stateFile,
    rotationGraceSeconds,
    allowedHosts,
  } = input;
  if (port !== undefined) {
    if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535) {
      throw new ClientConfigError("port must be an integer from 0 to 65535");
    }
    config.port = port;
  }
  if (host !== undefined) {
    if (typeof host !== "string" || host === "") throw new ClientConfigError("host must be a non-empty string");
    config.host = host;
  }
  if (autoApprove !== undefined) {
    if (typeof autoApprove !== "boolean") throw new ClientConfigError("autoApprove must be true or false");
    config.autoApprove = autoApprove;
  }
  if (testClock !== undefined) {
    if (typeof testClock !== "boolean") throw new ClientConfigError("testClock must be true or false");
    config.testClock = testClock;
  }
  if (clients !== undefined) {
    if (!Array.isArray(clients)) throw new ClientConfigError("clients must be a list");
    config.clients = clients.map((client: unknown, index) => {
      if (!isObject(client)) throw new ClientConfigError(`clients[${index}] must be an object`);
      for (const key of Object.keys(client)) {
        if (!CLIENT_FIELDS.includes(key))
          throw new ClientConfigError(
            `clients[${index}]: unknown field "${key}" (fields: ${CLIENT_FIELDS.join(", ")})`,
          );
      }
      if (typeof client["id"] !== "string") throw new ClientConfigError(`clients[${index}].id must be a string`);
      const scopes =
        client["scopes"] === undefined ? undefined : stringList(client["scopes"], `clients[${index}].scopes`);
      const native = client["native"];
      if (native !== undefined && typeof native !== "boolean")
        throw new ClientConfigError(`clients[${index}].native must be true or false`);
      return validateClient({
        id: client["id"],
        redirectUris: stringList(client["redirectUris"], `clients[${index}].redirectUris`),
        ...(scopes === undefined ? {} : { scopes }),
        ...(native === undefined ? {} : { native }),
      });
    });
  }
  if (users !== undefined) {
    if (typeof users !== "number" && !Array.isArray(users))
      throw new ClientConfigError("users must be a list of user records or a number of demo users");
    try {
      new SandboxUsers(users as UserRecord[] | number);
    } catch (error) {
      if (error instanceof UserConfigError) throw new ClientConfigError(error.message, { cause: error });
      throw error;
    }
    config.users = users as UserRecord[] | number;
  }
  if (defaultScopes !== undefined) {
    const list = stringList(defaultScopes, "defaultScopes");
    const unknown = list.find((scope) => !(knownScopes as readonly string[]).includes(scope));
    if (unknown !== undefined) throw new ClientConfigError(`defaultScopes: unknown scope "${unknown}"`);
    config.defaultScopes = list;
  }
  if (stateFile !== undefined) {
    if (typeof stateFile !== "string" || stateFile === "")
      throw new ClientConfigError("stateFile must be a non-empty string (a path)");
    config.stateFile = stateFile;
  }
  if (rotationGraceSeconds !== undefined) {
    if (
      typeof rotationGraceSeconds !== "number" ||
      !Number.isInteger(rotationGraceSeconds) ||
      rotationGraceSeconds < 0 ||
      rotationGraceSeconds > MAX_ROTATION_GRACE_SECONDS
    ) {
      throw new ClientConfigError(`rotationGraceSeconds must be an integer from 0 to ${MAX_ROTATION_GRACE_SECONDS}`);
    }
    config.rotationGraceSeconds = rotationGraceSeconds;
  }
  if (allowedHosts !== undefined) {
    config.allowedHosts = stringList(allowedHosts, "allowedHosts").map((name) => {
      try {
        return normalizeHostname(name);
      } catch (error) {
        if (error instanceof HostConfigError)
          throw new ClientConfigError(`allowedHosts: ${error.message}`, { cause: error });
        throw error;
      }
    });
  }
  return config;
}
