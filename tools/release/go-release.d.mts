/** The folder of the Go module, and the prefix of its tags (`packages/go/v`). */
export declare const GO_DIR: string;
export declare const TAG_PREFIX: string;
/** Compares two semantic versions. */
export declare function compareVersions(a: string, b: string): number;
/** The module path in packages/go/go.mod. */
export declare function modulePath(cwd: string): string;
/** The module's tags in the git repository at `repo`, oldest first (none outside a repository). */
export declare function moduleTags(repo: string): string[];
/** What a push releases of the Go module. */
export interface GoRelease {
  /** packages/go/package.json's version (changesets wrote it). */
  version: string;
  /** Its version before the push, or null when that cannot be read. */
  previous: string | null;
  /** `packages/go/v<version>`. */
  tag: string;
  /** The module's latest tag, or null. */
  previousTag: string | null;
  /** Whether the workflow pushes `tag`. */
  changed: boolean;
  /** Why (or why not). */
  why: string;
  /** The module path. */
  module: string;
}
/**
 * `previous` when given, else the version at the commit `before`; tags read in `repo` (default
 * `cwd`). Throws when Go would refuse the tag (older than the latest, or v2+ without /vN).
 */
export declare function goRelease(options: {
  cwd: string;
  before?: string | undefined;
  previous?: string | null;
  repo?: string;
}): GoRelease;
