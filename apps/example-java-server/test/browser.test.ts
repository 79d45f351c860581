// The app, built by `pnpm build` (build.mjs: Maven, then target/command.json), in Debian's Chromium
// against a real sandbox: the shared suite of every kit's example server app
// (tools/server-example-testing). Without a JDK the build leaves the app out with a warning (outside
// CI; in CI it fails), and so does this test.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeServerExample } from "@tenant-integration/server-example-testing";
import { describe, it } from "vitest";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const commandFile = join(appDir, "target", "command.json");

if (existsSync(commandFile)) {
  const command = JSON.parse(readFileSync(commandFile, "utf8")) as string[];
  describeServerExample({ name: "Java example server", command, cwd: appDir });
} else if (process.env.CI === "true") {
  throw new Error("apps/example-java-server/target is missing: run `pnpm build` (turbo's test task does)");
} else {
  console.warn("Java example server: left out: not built (no JDK, or run `pnpm build`)");
  describe.skip("Java example server", () => it("needs the app built by `pnpm build`", () => {}));
}
