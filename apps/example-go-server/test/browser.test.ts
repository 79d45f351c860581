// The app, built by `pnpm build` (go build -o bin/example-go-server), in Debian's Chromium against a
// real sandbox: the shared suite of every kit's example server app (tools/server-example-testing).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeServerExample } from "@tenant-integration/server-example-testing";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const binary = join(appDir, "bin", "example-go-server");
if (!existsSync(binary))
  throw new Error("apps/example-go-server/bin is missing: run `pnpm build` (turbo's test task does)");

describeServerExample({ name: "Go example server", command: [binary], cwd: appDir });
