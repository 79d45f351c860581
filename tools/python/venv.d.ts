/** The repository's root directory. */
export declare const root: string;
/** The venv's directory: `<root>/.venv`. */
export declare const venvDir: string;
/** The venv's python. */
export declare const python: string;
/**
 * Makes sure the venv exists and matches tools/python/requirements.lock and the SDK's pyproject.toml
 * (builds it when not; one builder at a time); resolves to the path of its python.
 */
export declare function ensureVenv(options?: { quiet?: boolean }): Promise<string>;
