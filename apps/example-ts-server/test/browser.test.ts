// The app, built by `pnpm build` (tsc to dist/), in Debian's Chromium against a real sandbox: the
// shared suite of every kit's example server app (tools/server-example-testing).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeServerExample } from "@tenant-integration/server-example-testing";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const main = join(appDir, "dist", "main.js");
if (!existsSync(main))
  throw new Error("apps/example-ts-server/dist is missing: run `pnpm build` (turbo's test task does)");

describeServerExample({ name: "TypeScript example server", command: [process.execPath, main], cwd: appDir });
