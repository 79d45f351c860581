/**
 * A token storage in one JSON file, for command-line tools on Node (and Bun, Deno with Node APIs).
 *
 * @see RFC 6749 §10.3 (tokens kept confidential), RFC 8252 (native apps)
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { TokenStorage } from "../storage/storage.js";

/**
 * Stores every key in one JSON file at `path`, readable by its owner only (mode 0600, in a directory
 * created with 0700). Each write goes to a temporary file in the same directory, which then replaces
 * the file with `rename`, so a crash never leaves a half-written file. Writes of one storage are
 * serialized, so concurrent `set`s do not lose each other.
 *
 * Errors (a read-only disk, a permission problem) reject the returned promises; the manager turns
 * them into `StorageError`. An absent file is an empty storage.
 *
 * @example
 * ```ts
 * import { fileStorage } from "@tenant-integration/token-manager/node";
 * import { homedir } from "node:os";
 * const storage = fileStorage(`${homedir()}/.config/my-cli/tokens.json`);
 * ```
 * @see RFC 6749 §10.3
 */
export function fileStorage(path: string): TokenStorage {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(op: () => Promise<T>): Promise<T> => {
    const run = queue.then(op, op);
    queue = run.catch(() => {});
    return run;
  };

  const read = async (): Promise<Record<string, string>> => {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return {};
      throw e;
    }
    const data: unknown = JSON.parse(text);
    return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, string>) : {};
  };

  const write = async (data: Record<string, string>): Promise<void> => {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await writeFile(temp, JSON.stringify(data), { mode: 0o600, flag: "wx" });
      // The mode of writeFile is masked by the umask; make sure.
      await chmod(temp, 0o600);
      await rename(temp, path);
    } catch (e) {
      await unlink(temp).catch(() => {});
      throw e;
    }
  };

  return {
    get: (key) => serial(async () => (await read())[key]),
    set: (key, value) =>
      serial(async () => {
        const data = await read();
        data[key] = value;
        await write(data);
      }),
    delete: (key) =>
      serial(async () => {
        const data = await read();
        if (!(key in data)) return;
        delete data[key];
        await write(data);
      }),
  };
}
