/** A running PostgreSQL server of {@link startPostgres} (or its {@link RunningPostgres.standby}). */
export interface RunningPostgres {
  /** `127.0.0.1` */
  readonly host: string;
  readonly port: number;
  /** The superuser initdb made (trust authentication: no password). */
  readonly user: string;
  /** `postgres`, the database initdb makes. */
  readonly database: string;
  /** `postgres://<user>@127.0.0.1:<port>/postgres`, for `new pg.Pool({ connectionString })`. */
  readonly url: string;
  /** The temporary directory: the data directory and the Unix socket. */
  readonly dir: string;
  readonly dataDir: string;
  /** The postmaster's pid (a new one after {@link start}). */
  readonly pid: number;
  /** Everything the server logged, across restarts, for failure messages. */
  output(): string;
  /** Starts it again on the same port and files, after {@link stop} or {@link kill}; crash recovery runs after a kill. */
  start(): Promise<void>;
  /** A fast shutdown (SIGINT: connections ended, a checkpoint written); resolves once every process exited. */
  stop(): Promise<void>;
  /**
   * Kills the postmaster and every backend (SIGKILL: no shutdown); resolves once all are gone.
   * Clients see their connections reset; new connections are refused until {@link start}.
   */
  kill(): Promise<void>;
  /** {@link kill}, then {@link start}: a crash and a supervisor's restart. */
  restart(): Promise<void>;
  /**
   * Stops the postmaster and every backend (SIGSTOP): connections stay open and nothing answers,
   * new connections are accepted by the kernel and never answered; a hung server, or one cut off
   * by the network. {@link resume} ends it.
   */
  hang(): void;
  /** Lets run again what {@link hang} stopped. */
  resume(): void;
  /**
   * A hot standby of this server (`pg_basebackup -R -X stream`) on a port of its own, streaming
   * this server's writes and refusing its own (SQLSTATE 25006). Closed with its own {@link close}.
   */
  standby(): Promise<RunningPostgres>;
  /** Kills it and removes its directory. */
  close(): Promise<void>;
}

/**
 * The PostgreSQL to run: POSTGRES_BIN_DIR (a directory holding `initdb` and `postgres`), else the
 * newest `/usr/lib/postgresql/<version>/bin`, else the directory of `postgres` on PATH; `undefined`
 * when none runs. `version` as `postgres --version` gives it, e.g. `15.18 (Debian 15.18-0+deb12u1)`.
 */
export declare function findPostgres(): { bin: string; version: string } | undefined;

/** A free TCP port on 127.0.0.1. */
export declare function freePort(): Promise<number>;

/**
 * Makes a new cluster (`initdb`: trust authentication, `user` the superuser, UTF-8, the C locale) in
 * a new temporary directory and starts it on 127.0.0.1 at `port` (else a free one), with `settings`
 * (`-c name=value`, over defaults: `fsync=off`, `shared_buffers=16MB`, `max_connections=200`);
 * resolves once it accepts connections. As root, runs PostgreSQL as the `postgres` user. Every server
 * not closed is killed when this process exits.
 */
export declare function startPostgres(options?: {
  bin?: string;
  port?: number;
  settings?: Record<string, string | number>;
  timeoutMs?: number;
  user?: string;
  database?: string;
}): Promise<RunningPostgres>;
