/**
 * Starts the system Chromium for the kit's browser tests (docs, example web app) through
 * playwright-core. It never downloads a browser: `playwright install` cannot work offline. It uses
 * `CHROMIUM_PATH` or Debian's `/usr/bin/chromium`, and as root installs Debian's `chromium` package
 * when neither exists.
 *
 * @packageDocumentation
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { chromium, type Browser, type LaunchOptions } from "playwright-core";

/** Where Debian's `chromium` package puts the browser. */
export const DEBIAN_CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * The flags every test browser starts with: headless, no sandbox (containers run as root), and no
 * background traffic to outside hosts (component updates, sync, QUIC probes, first-run pages), so
 * that a test can assert that no request leaves localhost.
 */
export const CHROMIUM_FLAGS: readonly string[] = Object.freeze([
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
]);

/** Thrown when no Chromium can be found or installed. `code` is stable. */
export class ChromiumNotFoundError extends Error {
  override readonly name = "ChromiumNotFoundError";
  readonly code = "CHROMIUM_NOT_FOUND";
}

/** Options of {@link findChromium}; each defaults to the real environment, so tests can inject. */
export interface FindChromiumOptions {
  /** The environment to read `CHROMIUM_PATH` from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Whether the process runs as root (default: `process.getuid?.() === 0`). */
  isRoot?: boolean;
  /** Whether a path is an executable file (default: `fs.accessSync(path, X_OK)`). */
  isExecutable?: (path: string) => boolean;
  /** Runs a command with inherited output and returns its exit status (default: `spawnSync`). */
  run?: (command: string, args: readonly string[]) => number | null;
}

const defaultIsExecutable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const defaultRun = (command: string, args: readonly string[]): number | null =>
  spawnSync(command, args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } }).status;

/**
 * Returns the path of a Chromium executable: `CHROMIUM_PATH` when set (it must exist), else
 * `/usr/bin/chromium`. When that is missing and the process runs as root, it installs Debian's
 * `chromium` with `apt-get update` and `apt-get install -y chromium` (about a minute) first.
 *
 * @throws {@link ChromiumNotFoundError} when `CHROMIUM_PATH` points at no executable, or when no
 * Chromium exists and it cannot be installed (not root, or apt-get failed).
 * @example
 * ```ts
 * const path = findChromium(); // "/usr/bin/chromium"
 * ```
 */
export function findChromium(options: FindChromiumOptions = {}): string {
  const env = options.env ?? process.env;
  const isExecutable = options.isExecutable ?? defaultIsExecutable;
  const isRoot = options.isRoot ?? process.getuid?.() === 0;
  const run = options.run ?? defaultRun;

  const configured = env["CHROMIUM_PATH"];
  if (configured !== undefined && configured !== "") {
    if (isExecutable(configured)) return configured;
    throw new ChromiumNotFoundError(`CHROMIUM_PATH is ${configured}, which is not an executable file`);
  }
  if (isExecutable(DEBIAN_CHROMIUM_PATH)) return DEBIAN_CHROMIUM_PATH;
  if (!isRoot) {
    throw new ChromiumNotFoundError(
      `No Chromium at ${DEBIAN_CHROMIUM_PATH}. Install it with \`sudo apt-get install -y chromium\` or set CHROMIUM_PATH; never \`playwright install\`.`,
    );
  }
  for (const args of [["update"], ["install", "-y", "chromium"]]) {
    const status = run("apt-get", args);
    if (status !== 0) {
      throw new ChromiumNotFoundError(
        `No Chromium at ${DEBIAN_CHROMIUM_PATH}, and \`apt-get ${args.join(" ")}\` failed (exit ${String(status)})`,
      );
    }
  }
  if (isExecutable(DEBIAN_CHROMIUM_PATH)) return DEBIAN_CHROMIUM_PATH;
  throw new ChromiumNotFoundError(`apt-get installed chromium, but ${DEBIAN_CHROMIUM_PATH} is still missing`);
}

/** Options of {@link launchChromium}. */
export interface LaunchChromiumOptions {
  /** The executable (default: {@link findChromium}). */
  executablePath?: string;
  /** Flags added after {@link CHROMIUM_FLAGS}. */
  extraArgs?: readonly string[];
  /** Passed to playwright-core's `chromium.launch` (default 30 000 ms). */
  timeout?: number;
}

/**
 * Launches the system Chromium headless with {@link CHROMIUM_FLAGS}. playwright-core gives every
 * launch a fresh temporary profile (user-data directory) and deletes it on close, so no state
 * leaks between runs; it refuses a `--user-data-dir` flag, which is why none is passed.
 *
 * @throws {@link ChromiumNotFoundError} from {@link findChromium}; playwright-core's errors when the
 * browser does not start.
 * @example
 * ```ts
 * const browser = await launchChromium();
 * const page = await browser.newPage();
 * await page.goto("http://127.0.0.1:8080/");
 * await browser.close();
 * ```
 */
export async function launchChromium(options: LaunchChromiumOptions = {}): Promise<Browser> {
  const executablePath = options.executablePath ?? findChromium();
  const launch: LaunchOptions = {
    executablePath,
    headless: true,
    args: [...CHROMIUM_FLAGS, ...(options.extraArgs ?? [])],
    timeout: options.timeout ?? 30_000,
  };
  return chromium.launch(launch);
}

export type { Browser, BrowserContext, ConsoleMessage, Page, Request, Route } from "playwright-core";
