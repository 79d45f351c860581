import type { RunningRedis } from "./redis-server.mjs";

/** A running Redis Cluster of throwaway redis-servers. */
export interface RunningRedisCluster {
  /** Every node, the primaries first as created (redis-cli assigns the replicas). */
  readonly nodes: RunningRedis[];
  /** `redis://127.0.0.1:<port>` of each node. */
  readonly urls: string[];
  /** `redis-server --version` of its nodes. */
  readonly version: string;
  /** Starts the node `index` again (after a kill) on its port with its cluster config file: it rejoins the cluster. */
  restart(index: number): Promise<RunningRedis>;
  /** Stops every node and removes the cluster's config files. */
  stop(): Promise<void>;
}
/** Runs redis-cli against 127.0.0.1:`port` and returns its trimmed output; throws on failure. */
export declare function cli(port: number, ...args: string[]): string;
/** Starts a cluster of `primaries` (default 3) and `replicas` per primary (default 0); resolves once it is ready. */
export declare function startRedisCluster(options?: {
  command?: string;
  primaries?: number;
  replicas?: number;
  nodeTimeoutMs?: number;
}): Promise<RunningRedisCluster>;
