/** The folder of the Python package, `packages/python`. */
export declare const PYTHON_DIR: string;
/**
 * Whether a push releases the Python package (its package.json version moved since `before`, or
 * differs from `previous` when that is given).
 */
export declare function pythonRelease(options: {
  cwd: string;
  before?: string | undefined;
  previous?: string | null;
}): {
  /** packages/python/package.json's version in the work tree. */
  version: string;
  /** Its version before the push, or null when that commit or file cannot be read. */
  previous: string | null;
  /** True when the versions differ (or the one before cannot be read): the workflow publishes to PyPI. */
  changed: boolean;
};
