import type { NonNpmPackage, Plan } from "./non-npm.mjs";

/** What the rehearsal found for one published npm package. */
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
/** What the rehearsal found for one package released elsewhere (tools/release/non-npm.mjs). */
export interface RehearsedNonNpm {
  name: string;
  /** Folder in the repository, relative to the root. */
  dir: string;
  /** Where users get it. */
  registry: string;
  /** Its package.json's version in the repository. */
  versionBefore: string;
  /** The version `changeset version` wrote. */
  version: string;
  /** The CHANGELOG.md changesets wrote ("" when none). */
  changelog: string;
  /** Whether it holds the rehearsal entry. */
  changelogWritten: boolean;
  /** What the release workflow would do, or null when it would refuse (`planError` says why). */
  plan: Plan | null;
  planError: string | null;
}
/**
 * `changeset version` with the pending changesets and a patch for every package changesets releases,
 * in a temporary copy of the repository.
 */
export declare function rehearseVersion(): { published: Rehearsed[]; nonNpm: RehearsedNonNpm[] };
/** What a minor changeset naming one package released elsewhere, alone, does. */
export interface RehearsedAlone {
  name: string;
  /** Its package.json's version before `changeset version`. */
  versionBefore: string;
  /** The version `changeset version` wrote. */
  version: string;
  /** Workspace packages whose version that changeset moved besides this one (none expected). */
  othersMoved: string[];
  /** Whether changesets wrote the rehearsal entry into its CHANGELOG.md. */
  changelogWritten: boolean;
  /** What the release workflow would do, or null when it would refuse (`planError` says why). */
  plan: Plan | null;
  planError: string | null;
  /** The file names its build wrote, or null when it has no build (the registry builds it). */
  built: string[] | null;
  /** The files of the archive carrying its notes (the Python sdist), or null. */
  contents: string[] | null;
}
/** A minor changeset for `entry` alone, `changeset version`, then its plan and build, in a temporary copy. */
export declare function rehearseAlone(entry: NonNpmPackage): RehearsedAlone;
/** The private workspace packages a patch for every npm package moves (none expected). */
export declare function privateMovedByNpmRelease(): string[];
