/** A runtime found on this machine; `run(script)` gives the arguments that execute an ES module file. */
export interface Runtime {
  name: "node20" | "node24" | "bun" | "deno" | "workerd";
  command: string;
  version: string;
  run(script: string): string[];
}
/** A runtime that was looked for and not found, with the reason. */
export interface MissingRuntime {
  name: string;
  why: string;
}
/** The pinned versions that `install.mjs` installs. */
export declare const pinned: Record<string, string>;
/** Where `install.mjs` puts the runtimes. */
export declare const runtimesDir: string;
/** The runtimes present and the missing ones. */
export declare function findRuntimes(): { found: Runtime[]; missing: MissingRuntime[] };
