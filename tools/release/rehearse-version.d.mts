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
/** What the rehearsal of the Python package's release found. */
export interface RehearsedPython {
  /** `@tenant-integration/python`. */
  name: string;
  /** packages/python/package.json's version before `changeset version`. */
  versionBefore: string;
  /** The version `changeset version` wrote for a minor changeset naming the Python package alone. */
  version: string;
  /** Workspace packages whose version that changeset moved besides the Python package (none expected). */
  othersMoved: string[];
  /** Whether changesets wrote the rehearsal entry into packages/python/CHANGELOG.md. */
  changelogWritten: boolean;
  /** The file names `python -m build` wrote (the sdist and the wheel). */
  built: string[];
  /** The files of the sdist, without its top folder. */
  sdistFiles: string[];
  /** Private workspace packages that a patch for every published npm package moved (none expected). */
  privateMovedByNpmRelease: string[];
}
/**
 * The Python package's release rehearsed in temporary copies: a minor changeset for it alone, then
 * `changeset version` and `python -m build`; and a patch for every npm package, which must move no
 * private package.
 */
export declare function rehearsePythonVersion(): RehearsedPython;
