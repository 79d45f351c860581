/**
 * The Node-only parts of the token manager: a file storage and a loopback callback receiver for
 * command-line tools. Browser bundles import `@tenant-integration/token-manager` instead, which has
 * no `node:` import.
 *
 * @packageDocumentation
 */
export { fileStorage, type FileStorageOptions, type FileTokenStorage } from "./file-storage.js";
export { FileStorageError, type FileStorageErrorCode } from "./file-storage-error.js";
export { isGone, processIdentity } from "./process-identity.js";
export { waitForCallback, type CallbackServer, type WaitForCallbackOptions } from "./loopback.js";
