/**
 * Where `tenant` keeps its files: one token file per tenant host and client, and a note of the last
 * login so that `tenant whoami` needs no flags.
 */
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** `$TENANT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/tenant-integration`, else `~/.config/tenant-integration`. */
export function configDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env["TENANT_CONFIG_DIR"]) return env["TENANT_CONFIG_DIR"];
  return join(env["XDG_CONFIG_HOME"] || join(home, ".config"), "tenant-integration");
}

/**
 * The token file of one tenant and client: `<host>-<client>.json`, with every character outside
 * `A-Z a-z 0-9 . _ -` replaced by `_` (so `127.0.0.1:4020` becomes `127.0.0.1_4020`).
 *
 * @example tokenFile("/home/ada/.config/tenant-integration", "https://acme.tenant.example", "cli") // …/acme.tenant.example-cli.json
 */
export function tokenFile(dir: string, tenantUrl: string, clientId: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, "_");
  return join(dir, `${safe(new URL(tenantUrl).host)}-${safe(clientId)}.json`);
}

/** The tenant and client of the last login. */
export interface LastLogin {
  tenantUrl: string;
  clientId: string;
}

const lastLoginFile = (dir: string) => join(dir, "last-login.json");

export async function readLastLogin(dir: string): Promise<LastLogin | undefined> {
  try {
    const value = JSON.parse(await readFile(lastLoginFile(dir), "utf8")) as Partial<LastLogin>;
    return typeof value.tenantUrl === "string" && typeof value.clientId === "string"
      ? { tenantUrl: value.tenantUrl, clientId: value.clientId }
      : undefined;
  } catch {
    return undefined;
  }
}

export async function writeLastLogin(dir: string, login: LastLogin): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(lastLoginFile(dir), JSON.stringify(login), { mode: 0o600 });
  await chmod(lastLoginFile(dir), 0o600);
}

/** Forgets the last login if it was this tenant and client. */
export async function forgetLastLogin(dir: string, login: LastLogin): Promise<void> {
  const last = await readLastLogin(dir);
  if (last?.tenantUrl === login.tenantUrl && last.clientId === login.clientId)
    await rm(lastLoginFile(dir), { force: true });
}

/** Removes the token file when nothing is left in it (the token manager leaves `{}`). */
export async function removeIfEmpty(path: string): Promise<void> {
  try {
    const data = JSON.parse(await readFile(path, "utf8")) as object;
    if (Object.keys(data).length === 0) await rm(path, { force: true });
  } catch {
    // absent or unreadable: leave it
  }
}
