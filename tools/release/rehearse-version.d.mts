/** What the rehearsal found for one published package. */
export interface Rehearsed {
  name: string;
  /** Folder in the repository, relative to the root. */
  dir: string;
  /** The version `changeset version` wrote. */
  version: string;
  /** Whether changesets wrote the rehearsal entry into the package's CHANGELOG.md. */
  changelogWritten: boolean;
  /** The files `pnpm pack --dry-run` lists after versioning. */
  packed: string[];
}
/** `changeset version` with a patch for every published package, in a temporary copy of the repository. */
export declare function rehearseVersion(): Rehearsed[];
