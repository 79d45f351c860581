import { configDefaults, defineConfig } from "vitest/config";
import { findPostgres } from "@tenant-integration/postgres-testing";

// The PostgreSQL suites need a real server (Debian's `postgresql` package: initdb and postgres). In
// CI a missing one fails the run; elsewhere those suites are left out with a warning saying how to
// get one, and the unit suites in src/ still run. A missing server is never reported as a pass on it.
function postgres() {
  const found = findPostgres();
  if (!found) {
    const why = `no runnable PostgreSQL (${process.env.POSTGRES_BIN_DIR ? `POSTGRES_BIN_DIR=${process.env.POSTGRES_BIN_DIR}` : "/usr/lib/postgresql/<version>/bin, or postgres on PATH"}): apt-get install -y postgresql, or set POSTGRES_BIN_DIR`;
    if (process.env.CI === "true") throw new Error(`token-store-postgres: required in CI: ${why}`);
    console.warn(`token-store-postgres: the PostgreSQL suites (test/*.test.ts) are left out: ${why}`);
  }
  return found;
}

export default defineConfig(({ mode }) => {
  // `pnpm test:unit` (vitest --mode unit) runs the unit suites in src/ only, without a server, and
  // leaves out the README samples' type-check, which compiles with TypeScript for seconds.
  const unit = mode === "unit";
  const server = unit ? undefined : postgres();
  return {
    test: {
      include: server ? ["src/**/*.test.ts", "test/**/*.test.ts"] : ["src/**/*.test.ts"],
      exclude: unit ? [...configDefaults.exclude, "src/samples.test.ts"] : configDefaults.exclude,
      globalSetup: server ? ["test/global-setup.ts"] : [],
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  };
});
