/** A fleet member's result of one command (never a token). */
export interface FleetResult {
  ok: boolean;
  status?: number;
  userId?: number;
  name?: string;
  code?: string;
  /** This member's manager made the refresh (`tokens-refreshed`). */
  refreshed: boolean;
  ms: number;
}
/** A message of child.mjs. */
export interface FleetMessage {
  ready?: true;
  result?: FleetResult;
  tokenRequest?: true;
  tokenResponse?: number;
  leaseLost?: string;
  /** Where a VICTIM stopped itself with SIGSTOP ("intent", "in-flight", "answered"). */
  paused?: string;
}
/** One running child.mjs. */
export interface FleetMember {
  readonly pid: number;
  next(timeoutMs?: number): Promise<FleetMessage>;
  send(command: { go: number } | { again: true } | { exit: true }): void;
  /** Sends a signal (default SIGKILL). */
  kill(signal?: NodeJS.Signals): void;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}
/** The environment of child.mjs. */
export interface FleetEnv {
  REDIS_URL: string;
  TENANT_URL: string;
  CLIENT_ID: string;
  REDIRECT_URI: string;
  PREFIX: string;
  CLOCK_OFFSET_MS?: string;
  LEASE_MS?: string;
  REQUEST_TIMEOUT_MS?: string;
  INTENT_WAIT_MS?: string;
  NO_OFFLINE_QUEUE?: string;
  VICTIM?: "before" | "after" | "pause" | "pause-intent" | "pause-in-flight" | "pause-answered" | "hold-answer" | "announce";
}
export declare function startMember(env: FleetEnv): FleetMember;
export declare function startFleet(size: number, env: FleetEnv): Promise<FleetMember[]>;
export declare function releaseTogether(members: FleetMember[], command: { go: number } | { again: true }): Promise<FleetResult[]>;
export declare function stopFleet(members: FleetMember[]): Promise<void>;
