/** The folder of the Go module, and the prefix of its tags (`packages/go/v`). */
export declare const GO_DIR: string;
export declare const TAG_PREFIX: string;
/** Compares two semantic versions. */
export declare function compareVersions(a: string, b: string): number;
/** The versions of a release: every published npm package's and the Python SDK's. */
export declare function releaseVersions(cwd: string): string[];
/** The module path in packages/go/go.mod. */
export declare function modulePath(cwd: string): string;
/** What the release does for the Go module. */
export interface GoRelease {
  /** The release's version: the highest of its versions. */
  version: string;
  /** `packages/go/v<version>`. */
  tag: string;
  /** The module's latest tag, or null. */
  previousTag: string | null;
  /** Whether the release pushes `tag`. */
  changed: boolean;
  /** Why (or why not). */
  why: string;
  /** The module path. */
  module: string;
}
export declare function goRelease(options: { cwd: string; versions?: string[] }): GoRelease;
