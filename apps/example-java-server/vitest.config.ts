import { serverExampleTest } from "@tenant-integration/server-example-testing/vitest-config";
import { defineConfig } from "vitest/config";

// The shared suite of the example servers: its timeouts, one file at a time.
export default defineConfig({ test: serverExampleTest });
