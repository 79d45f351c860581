/**
 * PKCE sign-in, rotation-safe refresh and revocation for the Tenant Integration Service, on `fetch`
 * and WebCrypto only. Runs unchanged in browsers, Node ≥ 20, Deno, Bun and edge workers; the Node
 * file store is in `@tenant-integration/token-manager/node`.
 *
 * @packageDocumentation
 */
export { createTokenManager } from "./token-manager.js";
export {
  createSessionManager,
  createSessions,
  type BeginSignInOptions,
  type CompleteSignInOptions,
  type SessionManagerOptions,
  type Sessions,
  type SessionsOptions,
  type SignedIn,
  type SignInStart,
} from "./sessions.js";
export { checkSessionId } from "./session-id.js";
export {
  bindingCookie,
  bindingCookieName,
  signInHandlers,
  type SignInHandlers,
  type SignInHandlersOptions,
} from "./sign-in-handlers.js";
export { bindingHash, createBinding } from "./binding.js";
export type {
  AuthorizationOptions,
  AuthorizationRequest,
  Listener,
  SessionInfo,
  TokenManager,
  TokenManagerEvents,
  TokenManagerOptions,
} from "./types.js";
export { createPkcePair, deriveCodeChallenge, type PkceOptions, type PkcePair } from "./pkce.js";
export type { RandomSource } from "./encoding.js";
/** The contract's scope names, a union of string literals (`"profile:read" | "users:read" | …`). */
export type { Scope } from "@tenant-integration/types";
export type { FetchLike } from "./fetch.js";
export { logSessionTo, type Logger, type LogLevel, type SessionLogEvent, type SessionLogger } from "./logger.js";
export {
  type ErrorCode,
  OAuthResponseError,
  SessionEndedError,
  TokenManagerError,
  TransientError,
  type OAuthErrorFields,
} from "./errors.js";
export type { ParsedTokenResponse } from "./token-response.js";
export type { HeldLock, Lock, LockManagerLike, LockWaitOptions } from "./lock.js";
export type { ProcessIdentity, TokenStorage } from "./storage/storage.js";
export { refreshIntents, type RefreshIntents } from "./refresh-intent.js";
export { memoryStorage } from "./storage/memory.js";
export { webStorage, type WebStorageLike } from "./storage/web.js";
