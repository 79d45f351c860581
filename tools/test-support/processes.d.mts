import type { ChildProcess } from "node:child_process";

/** One line of JSON from a child process. */
export type Message = Record<string, unknown>;

/** A child process that speaks one JSON object per line. */
export interface Child {
  readonly process: ChildProcess;
  /** The next line it prints (rejects if it exits first). */
  next(): Promise<Message>;
  /** Writes one command line to its stdin. */
  send(command: Message): void;
  /** Resolves when it has exited. */
  readonly exited: Promise<void>;
}

/** Runs `node args…` as a child that prints one JSON object per line. */
export declare function startJsonLines(args: string[]): Child;
/** Runs `node args…` as a worker and resolves once it printed `{"ready":true,…}`. */
export declare function startReady(args: string[]): Promise<Child>;
/** Sends `command` to every worker at once (each is ready and waiting on stdin) and collects their answers. */
export declare function together(workers: readonly Child[], command: Message): Promise<Message[]>;
/** Kills the processes (SIGKILL, after SIGCONT for a stopped one) and waits until they are gone. */
export declare function stopAll(children: readonly Child[]): Promise<void>;
