/** The version of `<dir>/package.json` at `commit` in the git repository at `cwd`, or null when unreadable. */
export declare function versionAt(cwd: string, dir: string, commit: string | undefined): string | null;
/** How a push moved the version of the package in `dir` (changesets bumps it; npm never publishes it). */
export interface VersionChange {
  /** `<dir>/package.json`'s version in the work tree. */
  version: string;
  /** Its version before the push, or null when that cannot be read. */
  previous: string | null;
  /** True when the versions differ (or the one before cannot be read). */
  changed: boolean;
}
/** `previous` when given, else the version at the commit `before`. */
export declare function versionChange(options: {
  cwd: string;
  dir: string;
  before?: string | undefined;
  previous?: string | null;
}): VersionChange;
