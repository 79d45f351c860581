/**
 * One PostgreSQL server per test run (initdb in a temporary directory, a free loopback port), with the
 * kit's table made once; killed and removed after the run. Each test file uses its own table (or its
 * own origin and client), so files can share it; a file that restarts, stops or pauses PostgreSQL
 * starts a server of its own.
 */
import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { startPostgres } from "@tenant-integration/postgres-testing";

declare module "vitest" {
  export interface ProvidedContext {
    /** `postgres://tenant@127.0.0.1:<port>/postgres` of the run's server. */
    postgresUrl: string;
  }
}

export default async function setup({ provide }: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  provide("postgresUrl", server.url);
  return () => server.close();
}
