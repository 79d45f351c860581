/**
 * The state file (`--state-file`, Node only): the sandbox's clients, codes, tokens and test clock
 * saved as JSON, so that a restart or redeploy does not sign every integration out.
 *
 * Writes are atomic (a temporary file in the same directory, fsync, rename, fsync of the
 * directory) and coalesced: a change schedules one write {@link STATE_WRITE_DELAY_MS} later (or
 * twice as long as the last write took, if longer, so that saving a large state never takes more
 * than about a third of the time), and the changes made meanwhile, or during a write, go into the
 * next one. A file that cannot be read
 * or is not a sandbox state is reported and never overwritten.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { parseSnapshot, SnapshotFormatError, type SandboxSnapshot } from "./snapshot.js";

/** How long a change waits for others before the state file is written, in milliseconds. */
export const STATE_WRITE_DELAY_MS = 100;

/** What went wrong with the state file. */
export type StateFileErrorCode = "state_file_unreadable" | "state_file_corrupt" | "state_file_write_failed";

/**
 * The state file cannot be read, is not a sandbox state, or cannot be written. The message names
 * the file; it never contains a token.
 */
export class StateFileError extends Error {
  override readonly name = "StateFileError";
  readonly code: StateFileErrorCode;
  /** The state file's path. */
  readonly path: string;

  constructor(code: StateFileErrorCode, path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.path = path;
  }
}

function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? "error";
}

/**
 * Reads a state file. A missing file is a first start (undefined).
 *
 * @throws StateFileError `state_file_unreadable` when it exists but cannot be read, or
 *   `state_file_corrupt` when it is not JSON or not a sandbox state of a supported version.
 * @example const saved = await readStateFile("sandbox-state.json");
 * @see RFC 6749 §10.3 (the file holds live tokens)
 */
export async function readStateFile(path: string): Promise<SandboxSnapshot | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw new StateFileError(
      "state_file_unreadable",
      path,
      `cannot read the state file ${path} (${errnoCode(error)})`,
      { cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StateFileError(
      "state_file_corrupt",
      path,
      `the state file ${path} is not valid JSON; it was left as it is`,
      { cause: error },
    );
  }
  try {
    return parseSnapshot(json);
  } catch (error) {
    if (!(error instanceof SnapshotFormatError)) throw error;
    throw new StateFileError(
      "state_file_corrupt",
      path,
      `the state file ${path} is not a sandbox state (${error.message}); it was left as it is`,
      { cause: error },
    );
  }
}

/**
 * Replaces `path` with `text` atomically: readers see the old file or the new one, never a part.
 * The file is created with mode 0600 (it holds live tokens).
 *
 * @throws StateFileError `state_file_write_failed` (the temporary file is removed).
 * @see https://man7.org/linux/man-pages/man2/rename.2.html (rename replaces the target atomically)
 */
export async function writeStateFileAtomically(path: string, text: string): Promise<void> {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`);
  try {
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new StateFileError(
      "state_file_write_failed",
      path,
      `cannot write the state file ${path} (${errnoCode(error)})`,
      { cause: error },
    );
  }
  // Make the rename itself durable. Not every platform can fsync a directory (Windows): then the
  // rename is as durable as that file system makes it.
  try {
    const handle = await open(directory, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort, see above
  }
}

/** Writes a sandbox's snapshot to its state file, coalescing changes. */
export class StateFileWriter {
  readonly #path: string;
  readonly #snapshot: () => SandboxSnapshot;
  readonly #onError: (error: StateFileError) => void;
  #dirty = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> | undefined;
  #closed = false;
  #lastWriteMs = 0;

  /**
   * @param snapshot gives the state to save, at the time of the write
   * @param onError hears of a failed background write; the change stays pending and is retried at the next change or flush
   */
  constructor(path: string, snapshot: () => SandboxSnapshot, onError: (error: StateFileError) => void) {
    this.#path = path;
    this.#snapshot = snapshot;
    this.#onError = onError;
  }

  /** Notes a change; the file is written within {@link STATE_WRITE_DELAY_MS} plus the time of a write in progress. */
  schedule(): void {
    this.#dirty = true;
    if (this.#writing === undefined) this.#arm();
  }

  /**
   * Writes now: waits for a write in progress, then saves the current state.
   *
   * @throws StateFileError when the write fails.
   */
  async flush(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#writing !== undefined) await this.#writing.catch(() => undefined);
    this.#dirty = false;
    await this.#write();
  }

  /** Writes what is pending, if anything; for shutdown. @throws StateFileError when the write fails. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#writing !== undefined) await this.#writing.catch(() => undefined);
    if (this.#dirty) await this.flush();
  }

  async #background(): Promise<void> {
    this.#timer = undefined;
    this.#dirty = false;
    try {
      await this.#write();
    } catch (error) {
      // Kept pending, and retried at the next change rather than in a loop against a full disk.
      this.#dirty = true;
      this.#onError(error as StateFileError);
    }
  }

  #arm(): void {
    const delay = Math.max(STATE_WRITE_DELAY_MS, 2 * this.#lastWriteMs);
    if (this.#timer === undefined && !this.#closed) this.#timer = setTimeout(() => void this.#background(), delay);
  }

  async #write(): Promise<void> {
    const started = performance.now();
    const writing = writeStateFileAtomically(this.#path, `${JSON.stringify(this.#snapshot())}\n`);
    this.#writing = writing;
    try {
      await writing;
    } finally {
      this.#writing = undefined;
      this.#lastWriteMs = performance.now() - started;
      // Changes made during the write go into one more write, after the same delay.
      if (this.#dirty) this.#arm();
    }
  }
}
