/** A TypeScript sample as an ES module (types erased, nothing checked: see `typeCheckSamples`). */
export declare function toJavaScript(source: string): string;

/**
 * A fresh directory for programs under `<packageRoot>/node_modules/.cache/`, so that a program's
 * imports resolve to the package's dependencies as a user's would. The caller removes it.
 */
export declare function programDirectory(packageRoot: string, prefix?: string): string;

export interface RunProgramOptions {
  /** A directory from {@link programDirectory}. */
  dir: string;
  /** The program's file name, without extension (`<dir>/<name>.run.mjs`). */
  name: string;
  /** The program, as JavaScript (see {@link toJavaScript}). */
  source: string;
  /** Added to the environment of the test process. */
  env?: Record<string, string>;
  /** How far ahead of the real clock the program's `Date.now()` runs, in milliseconds (default 0). */
  clockOffsetMs?: number;
  /** Called once with the first authorize URL the program prints, as a person would open it. */
  openAuthorizeUrl?: (url: string) => unknown;
}

export interface ProgramRun {
  /** The exit code, or null when a signal ended the program. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Whether the program printed an authorize URL (and `openAuthorizeUrl` was called). */
  openedAuthorizeUrl: boolean;
}

/**
 * Runs a program with Node and resolves when it has exited and the URL handler has settled.
 *
 * @throws what `openAuthorizeUrl` threw.
 */
export declare function runProgram(options: RunProgramOptions): Promise<ProgramRun>;

/**
 * The browser of a person signing in to a tenant that approves at once (the sandbox with
 * auto-approve): GET the authorize URL, expect a 302, and follow it to the redirect URI.
 *
 * @throws Error when the authorize endpoint does not redirect or the redirect URI does not answer 2xx.
 */
export declare function approveInBrowser(url: string): Promise<Response>;

export interface RunVitestOptions {
  /** A directory from {@link programDirectory}. */
  dir: string;
  /** The test file's name, without extension (`<dir>/<name>.test.ts`). */
  name: string;
  /** The test file, TypeScript as written (vitest transpiles it). */
  source: string;
}

/**
 * Runs a vitest test file with the vitest that `dir` resolves, and resolves when vitest has exited.
 * `openedAuthorizeUrl` is always false.
 */
export declare function runVitest(options: RunVitestOptions): Promise<ProgramRun>;
