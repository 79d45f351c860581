/** A running Prism. */
export interface RunningPrism {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Everything Prism printed, for failure messages. */
  output(): string;
  /** Stops Prism and the workers it forked (SIGTERM, then SIGKILL after 3 s). */
  stop(): Promise<void>;
}
/** One violation of the contract, as Prism reports it in `sl-violations`. */
export interface PrismViolation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}
/** A free TCP port on 127.0.0.1. */
export declare function freePort(): Promise<number>;
/**
 * Starts `prism mock <bundle>`, or `prism proxy <bundle> <upstream> --errors` when `upstream` is
 * given, on a free loopback port, and resolves once it answers.
 */
export declare function startPrism(options: {
  bundle: string;
  upstream?: string;
  timeoutMs?: number;
}): Promise<RunningPrism>;
/** The violations in a Prism answer's `sl-violations` header ([] when none). */
export declare function violations(response: Response): PrismViolation[];
