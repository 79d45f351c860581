/** The body of every block of the README at `readmePath` fenced exactly as ```ts, in document order. */
export declare function readmeSamples(readmePath: string | URL): string[];

export interface TypeCheckSamplesOptions {
  /** The package's directory (with or without a trailing `/`); its `tsconfig.json` gives the compiler options. */
  root: string;
  /** The samples, each compiled as its own module (`readme-sample-<n>.ts` in `root`). */
  samples: readonly string[];
  /** Import specifier → source file(s), relative to `root`: `{ "@scope/pkg": ["./src/index.ts"] }`. */
  paths: Record<string, string[]>;
  /** Declarations of what the samples deliberately leave to the app (`readme-ambient.d.ts`). */
  ambient?: string;
}

/**
 * Type-checks README samples in memory as modules of the package at `root`, under its tsconfig with
 * `paths` mapping its import specifiers to its sources. Returns the diagnostics as
 * `"<file>:<line>: <message>"` (`readme-sample-<n>.ts` for the n-th sample), [] when clean.
 *
 * @throws Error when `root/tsconfig.json` cannot be read.
 */
export declare function typeCheckSamples(options: TypeCheckSamplesOptions): string[];
