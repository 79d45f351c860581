/** Prints one JSON line. */
export declare function say(message: unknown): void;
/** Serves the multi-process tests' commands on stdin (see worker.mjs); says `{"ready":true,"pid"}` once listening. */
export declare function runWorker<Storage>(options: {
  createTokenManager: (options: never) => unknown;
  url: string;
  clientId: string;
  redirectUri: string;
  storage: () => Storage;
  commands?: Record<string, (command: Record<string, unknown>, storage: Storage) => Promise<unknown>>;
}): void;
