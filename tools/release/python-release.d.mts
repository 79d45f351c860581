/** Whether a push releases the Python package (its package.json version moved since `before`). */
export declare function pythonRelease(options: { cwd: string; before: string | undefined }): {
  /** packages/python/package.json's version in the work tree. */
  version: string;
  /** Its version at `before`, or null when that commit or file cannot be read. */
  previous: string | null;
  /** True when the versions differ (or `before` cannot be read): the workflow publishes to PyPI. */
  changed: boolean;
};
