import type { ChildProcess } from "node:child_process";

/** A free TCP port on the loopback interface. */
export declare function freePort(): Promise<number>;
/** The redis-server to run (REDIS_SERVER_PATH, else `redis-server` on PATH) and its version, `undefined` when missing. */
export declare function findRedisServer(): { command: string; version: string } | undefined;
/**
 * Spawns `command args` (a redis-server) and resolves once it logs "Ready to accept connections";
 * rejects, with its log, when it cannot be run, exits first or is not ready within `timeoutMs`
 * (default 15 s; it is then killed). `what` names it in those errors.
 */
export declare function spawnRedisServer(
  command: string,
  args: string[],
  what?: string,
  timeoutMs?: number,
): Promise<{ child: ChildProcess; exited: Promise<unknown>; output(): string }>;
/** A running redis-server. */
export interface RunningRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly pid: number;
  /** Everything it printed, for failure messages. */
  output(): string;
  /** SIGTERM to its pid, resolved once it exited. */
  stop(): Promise<void>;
  /** SIGKILL to its pid (no shutdown), resolved once it exited. */
  kill(): Promise<void>;
}
/**
 * Starts redis-server on 127.0.0.1 without RDB snapshots (`--save ''`) and with `args` (default
 * `--appendonly no`: no persistence at all), on `port` (to restart one) or a free port; resolves once
 * it accepts connections.
 */
/** Whether an error of {@link spawnRedisServer} says the server exited because its port was taken. */
export declare function isPortTaken(error: unknown): boolean;

export declare function startRedisServer(options?: {
  command?: string;
  port?: number;
  timeoutMs?: number;
  args?: string[];
}): Promise<RunningRedis>;
