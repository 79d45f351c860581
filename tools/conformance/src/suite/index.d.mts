// Types of the conformance orchestrator (src/suite/*.mjs), for the tests.

export type Target = "node" | "python" | "python-async" | "browser" | "go" | "java";
export type Storage = "memory" | "web" | "file" | "redis" | "redis-cluster" | "postgres";

/** One expanded run: a scenario on one storage with one actor mix and one parameter combination. */
export interface Run {
  readonly id: string;
  readonly scenario: string;
  readonly summary: string;
  readonly storage: Storage;
  readonly mix: Target | "mixed";
  readonly actorTargets: readonly Target[];
  /** A server's sessions (the scenario's `sessions`), 0 for a scenario of one session. */
  readonly sessions: number;
  readonly params: Readonly<Record<string, string>>;
  readonly geometry: "reduced" | "full";
  readonly timing: Readonly<Record<string, number>>;
  readonly steps: readonly object[];
  readonly expect: { readonly outcome: "kept" | "ended" | "signed-out"; readonly code?: string };
}

/** What one run found. */
export interface RunResult {
  readonly id: string;
  readonly scenario: string;
  readonly storage: Storage;
  readonly mix: string;
  readonly params: Readonly<Record<string, string>>;
  readonly actors: number;
  /** How many sessions the run served (0: one, the actors' own). */
  readonly sessions: number;
  readonly runtimes: readonly string[];
  readonly passed: boolean;
  readonly failures: readonly string[];
  readonly expiries: number;
  readonly refreshes: number | undefined;
  readonly worstWaitMs: number;
  /** Per call step (its label, e.g. "6 (call)"): how many calls ended with each outcome, and the longest. */
  readonly calls: Readonly<
    Record<string, { readonly outcomes: Readonly<Record<string, number>>; readonly worstMs: number }>
  >;
  readonly ms: number;
}

export type Commands = Partial<Record<Target, readonly string[] | undefined>>;

export declare class ScenarioError extends Error {
  readonly file: string;
  readonly line: number | undefined;
  readonly field: string;
}
export declare function loadScenario(file: string): Record<string, unknown>;
export declare function loadScenarios(dir?: string): Record<string, unknown>[];
export declare function expand(
  scenario: Record<string, unknown>,
  options?: { geometry?: "reduced" | "full"; targets?: string[] },
): Run[];
export declare const TARGETS: Readonly<Record<Target, readonly Storage[]>>;
/** The target of each of a run's processes: the mix in turn from `offset` (0 when every target has a process). */
export declare function mixTargets<T extends string>(mix: readonly T[], actors: number, offset: number): T[];
/** The features beyond the refresh protocol, and the targets whose actor declares each. */
export declare const FEATURES: Readonly<Record<"sessions", readonly Target[]>>;
/** A scenario's targets left out because their actor lacks a feature it needs. */
export interface NotRun {
  readonly scenario: string;
  readonly targets: readonly Target[];
  readonly why: string;
}
export declare function notRun(
  scenarios: Record<string, unknown>[],
  targets?: readonly string[],
  geometry?: "reduced" | "full",
): NotRun[];
/** Runs left out of the reduced geometry while a kit's failure in them is open (scenarios.mjs). */
export declare const KNOWN_FAILURES: readonly { scenario: string; storage: string; mix: string; why: string }[];
/** Targets that run alone only a subset of the scenarios at the reduced geometry (`pnpm test`), each with why. */
export declare const REDUCED_SUBSETS: Readonly<
  Record<string, { readonly scenarios: readonly string[]; readonly why: string }>
>;
/** The failures of one-refresh-per-expiry in a run of `sessions` sessions, each one token family. */
export declare function refreshesPerSession(ledger: object, sessions: number, expiries: number): string[];
export declare const SCENARIO_DIR: string;
export declare const CLIENT_ID: string;
export declare const REDIRECT_URI: string;

export interface Survey {
  readonly targets: Target[];
  readonly redis: { command: string; version: string } | undefined;
  /** PostgreSQL's programs (tools/postgres findPostgres()), when found. */
  readonly postgres: { bin: string; version: string } | undefined;
  readonly missing: { name: string; why: string }[];
}
export declare function survey(options?: { commands?: Commands }): Survey;
export declare function plan(options: {
  geometry?: "reduced" | "full";
  targets: readonly string[];
  redis?: object | undefined;
  postgres?: object | undefined;
  filter?: (run: Run) => boolean;
  dir?: string;
}): Run[];
export interface Suite {
  readonly sandbox: { readonly url: string };
  run(run: Run): Promise<RunResult>;
  close(): Promise<void>;
}
export declare function openSuite(options: {
  runs: readonly Run[];
  commands?: Commands;
  redis?: { command: string } | undefined;
  noLock?: boolean;
  lanes?: number;
}): Promise<Suite>;
export interface Matrix {
  readonly date: string;
  readonly geometry: string;
  readonly passed: number;
  readonly failed: number;
  readonly results: readonly RunResult[];
  /** The targets each scenario left out for a feature their actor lacks. */
  readonly notRun: readonly NotRun[];
}
export declare function matrix(
  results: readonly RunResult[],
  context: {
    geometry: string;
    redis?: string | undefined;
    postgres?: string | undefined;
    missing: { name: string; why: string }[];
    scenarios?: Record<string, unknown>[];
    notRun?: NotRun[];
  },
): Matrix;
export declare function markdown(report: Matrix): string;
export declare function protocolViolation(message: unknown): string | undefined;
export declare function defaultCommands(): Commands;
