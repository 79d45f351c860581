/** What the release workflow does for a package on a push. */
export interface Plan {
  /** Whether it releases the package. */
  changed: boolean;
  /** What it does then (with the version and the names users meet). */
  release: string;
  /** Why it does (or does not). */
  why: string;
}
/** A package changesets versions and npm never publishes, released to its own registry. */
export interface NonNpmPackage {
  /** The workspace package's name (what changesets name). */
  name: string;
  /** Its folder, relative to the root. */
  dir: string;
  /** Where users get it. */
  registry: string;
  /** The release script the workflow runs with the commit before the push. */
  script: string;
  /** What the workflow does for the tree at `cwd`, given the version before the push; throws when the release would be refused. */
  plan(options: { cwd: string; previous: string | null; repo: string }): Plan;
  /** Builds the package in `folder` into `out`: the file names written, and the files of the archive carrying its notes. */
  build?(folder: string, out: string): { built: string[]; contents: string[] };
}
/** Every package changesets versions that npm never publishes. */
export declare const nonNpmPackages: NonNpmPackage[];
