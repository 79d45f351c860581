/**
 * The in-memory state one sandbox's routes share.
 *
 * @module
 */
import type { ClientRegistry } from "./clients.js";
import type { Clock } from "./clock.js";
import type { CodeStore } from "./codes.js";
import type { EventLog } from "./events.js";
import type { RefreshLedger } from "./ledger.js";
import type { PendingRequests } from "./pending.js";
import type { TokenStore } from "./tokens.js";
import type { SandboxUsers } from "./users.js";

/** Everything a route handler reads or changes. */
export interface SandboxState {
  readonly clock: Clock;
  readonly clients: ClientRegistry;
  readonly codes: CodeStore;
  readonly tokens: TokenStore;
  readonly events: EventLog;
  /** Every refresh token presented, by fingerprint; reuses; families. */
  readonly ledger: RefreshLedger;
  readonly pending: PendingRequests;
  /** The users who can sign in; `GET /api/v1/auth/user` answers each token with its own user's record. */
  readonly users: SandboxUsers;
  /** Scopes granted when an authorization request has no `scope` and the client no allow-list. */
  readonly defaultScopes: readonly string[];
  /** Whether `GET /oauth/authorize` approves at once instead of showing the consent page. */
  autoApprove: boolean;
}
