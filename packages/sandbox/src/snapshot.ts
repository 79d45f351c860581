/**
 * The persisted form of a sandbox (clients, codes, tokens and their families, the test clock's
 * offset), and its strict reading: a state file that does not have exactly this shape is refused
 * rather than half loaded.
 *
 * @module
 */
import { validateClient, type ClientRegistration } from "./clients.js";
import type { CodeSnapshot } from "./codes.js";
import type { TokenSnapshot } from "./tokens.js";
import type { UserId } from "./users.js";

/**
 * The version of the snapshot format this sandbox writes. It reads this one and version 1, written
 * by a sandbox of one user, whose grants and codes carry no user: they are the default user's.
 */
export const SNAPSHOT_VERSION = 2;
/** The versions this sandbox reads. */
const READABLE_VERSIONS: readonly unknown[] = [1, SNAPSHOT_VERSION];

/** Everything that survives a restart. Times are epoch milliseconds of the sandbox clock. */
export interface SandboxSnapshot {
  readonly format: "tenant-sandbox-state";
  readonly version: typeof SNAPSHOT_VERSION;
  /** Seconds the test clock had been moved forward. */
  readonly clockOffsetSeconds: number;
  readonly clients: readonly ClientRegistration[];
  readonly codes: CodeSnapshot;
  readonly tokens: TokenSnapshot;
}

/** A snapshot that does not have the expected shape; the message names the first bad field. */
export class SnapshotFormatError extends Error {
  override readonly name = "SnapshotFormatError";
  readonly code = "invalid_snapshot";
}

type Json = Record<string, unknown>;

function object(value: unknown, where: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new SnapshotFormatError(`${where} must be an object`);
  return value as Json;
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new SnapshotFormatError(`${where} must be a list`);
  return value;
}

function text(value: unknown, where: string): string {
  if (typeof value !== "string" || value === "") throw new SnapshotFormatError(`${where} must be a non-empty string`);
  return value;
}

function time(value: unknown, where: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new SnapshotFormatError(`${where} must be a number`);
  return value;
}

function userId(value: unknown, where: string): UserId {
  if ((typeof value === "string" && value !== "") || Number.isSafeInteger(value)) return value as UserId;
  throw new SnapshotFormatError(`${where} must be a non-empty string or a whole number`);
}

function strings(value: unknown, where: string): string[] {
  return list(value, where).map((item, index) => text(item, `${where}[${index}]`));
}

function optional<T>(
  record: Json,
  key: string,
  read: (value: unknown, where: string) => T,
  where: string,
): { [key: string]: T } {
  return record[key] === undefined ? {} : { [key]: read(record[key], `${where}.${key}`) };
}

/**
 * Checks a parsed state file and returns it typed.
 *
 * @throws SnapshotFormatError naming the first field that is missing or of the wrong type, or an
 *   unknown format or version.
 * @example parseSnapshot(JSON.parse(await readFile("sandbox-state.json", "utf8")))
 * @see RFC 6749 §10.3 (the file holds live tokens: keep it private)
 */
export function parseSnapshot(input: unknown): SandboxSnapshot {
  const root = object(input, "the state");
  if (root["format"] !== "tenant-sandbox-state") throw new SnapshotFormatError('format must be "tenant-sandbox-state"');
  if (!READABLE_VERSIONS.includes(root["version"]))
    throw new SnapshotFormatError(
      `version ${String(root["version"])} is not supported (this sandbox reads ${READABLE_VERSIONS.join(" and ")})`,
    );
  const clockOffsetSeconds = time(root["clockOffsetSeconds"], "clockOffsetSeconds");
  if (clockOffsetSeconds < 0) throw new SnapshotFormatError("clockOffsetSeconds must not be negative");
  const clients = list(root["clients"], "clients").map((item, index) => {
    const where = `clients[${index}]`;
    const client = object(item, where);
    try {
      return validateClient({
        id: text(client["id"], `${where}.id`),
        redirectUris: strings(client["redirectUris"], `${where}.redirectUris`),
        ...optional(client, "scopes", strings, where),
        ...(client["native"] === true ? { native: true } : {}),
      });
    } catch (error) {
      if (error instanceof SnapshotFormatError) throw error;
      throw new SnapshotFormatError(`${where}: ${(error as Error).message}`, { cause: error });
    }
  });
  const codes = list(root["codes"], "codes").map((item, index) => {
    const where = `codes[${index}]`;
    const code = object(item, where);
    const base = {
      code: text(code["code"], `${where}.code`),
      expiresAt: time(code["expiresAt"], `${where}.expiresAt`),
    };
    if (code["used"] === true) return { ...base, used: true as const, ...optional(code, "familyId", text, where) };
    if (code["used"] !== false) throw new SnapshotFormatError(`${where}.used must be true or false`);
    return {
      ...base,
      used: false as const,
      clientId: text(code["clientId"], `${where}.clientId`),
      ...optional(code, "user", userId, where),
      redirectUri: text(code["redirectUri"], `${where}.redirectUri`),
      codeChallenge: text(code["codeChallenge"], `${where}.codeChallenge`),
      scopes: strings(code["scopes"], `${where}.scopes`),
    };
  });
  const tokens = object(root["tokens"], "tokens");
  const families = list(tokens["families"], "tokens.families").map((item, index) => {
    const where = `tokens.families[${index}]`;
    const family = object(item, where);
    if (typeof family["revoked"] !== "boolean") throw new SnapshotFormatError(`${where}.revoked must be true or false`);
    return {
      id: text(family["id"], `${where}.id`),
      clientId: text(family["clientId"], `${where}.clientId`),
      ...optional(family, "user", userId, where),
      scopes: strings(family["scopes"], `${where}.scopes`),
      revoked: family["revoked"],
    };
  });
  const accessTokens = list(tokens["accessTokens"], "tokens.accessTokens").map((item, index) => {
    const where = `tokens.accessTokens[${index}]`;
    const record = object(item, where);
    return {
      token: text(record["token"], `${where}.token`),
      family: text(record["family"], `${where}.family`),
      scopes: strings(record["scopes"], `${where}.scopes`),
      expiresAt: time(record["expiresAt"], `${where}.expiresAt`),
    };
  });
  const refreshTokens = list(tokens["refreshTokens"], "tokens.refreshTokens").map((item, index) => {
    const where = `tokens.refreshTokens[${index}]`;
    const record = object(item, where);
    return {
      token: text(record["token"], `${where}.token`),
      family: text(record["family"], `${where}.family`),
      expiresAt: time(record["expiresAt"], `${where}.expiresAt`),
      ...optional(record, "rotatedAt", time, where),
      ...optional(record, "successor", text, where),
    };
  });
  return {
    format: "tenant-sandbox-state",
    version: SNAPSHOT_VERSION,
    clockOffsetSeconds,
    clients,
    codes,
    tokens: { families, accessTokens, refreshTokens },
  };
}
