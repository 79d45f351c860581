/** The folder of the Java reactor, `packages/java`. */
export declare const JAVA_DIR: string;
/** Maven Central's repository URL. */
export declare const CENTRAL: string;
/** The reactor's groupId and the artifactIds it publishes (the parent POM first). */
export declare function coordinates(cwd: string): { group: string; artifacts: string[] };
/** What a push releases of the Java SDK. */
export interface JavaRelease {
  /** packages/java/package.json's version (changesets wrote it; the Maven build reads it). */
  version: string;
  /** Its version before the push, or null when that commit or file cannot be read. */
  previous: string | null;
  /** Whether the workflow deploys it: the version moved, and is not 0.0.0. */
  changed: boolean;
  /** Why (or why not). */
  why: string;
  /** The Maven groupId. */
  group: string;
  /** The artifactIds deployed, the parent POM first. */
  artifacts: string[];
}
/** `previous` when given, else the version at the commit `before`. Never releases 0.0.0. */
export declare function javaRelease(options: {
  cwd: string;
  before?: string | undefined;
  previous?: string | null;
}): JavaRelease;
/** The versions of `group:artifact` on Maven Central (none when it answers 404). Throws when it cannot be asked. */
export declare function centralVersions(group: string, artifact: string, fetchImpl?: typeof fetch): Promise<string[]>;
/** Throws when Maven Central has `version` of any of the artifacts. */
export declare function checkCentral(
  release: { version: string; group: string; artifacts: string[] },
  fetchImpl?: typeof fetch,
): Promise<void>;
