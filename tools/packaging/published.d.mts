/** A workspace package's manifest, as far as publishing reads it. */
export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  homepage?: string;
  bugs?: string | { url?: string };
  files?: string[];
  publishConfig?: { access?: string; provenance?: boolean };
  [field: string]: unknown;
}
/** The repository root. */
export declare const root: string;
/** `git+https://github.com/tenant-integration/sdk.git` */
export declare const repositoryUrl: string;
/** `https://github.com/tenant-integration/sdk/issues` */
export declare const issuesUrl: string;
/** The GitHub page of a folder of the repository. */
export declare function treeUrl(dir: string): string;
/** Every non-private workspace package: folder relative to the root, and manifest. */
export declare function publishedPackages(): { dir: string; manifest: Manifest }[];
/** Why the package in `dir` is not ready to publish; [] when it is. */
export declare function publishProblems(dir: string, manifest: Manifest): string[];
