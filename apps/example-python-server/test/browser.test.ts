// The app (app.py, Starlette served by uvicorn) run by the repository's venv, in Debian's Chromium
// against a real sandbox: the shared suite of every kit's example server app
// (tools/server-example-testing).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "@tenant-integration/python-venv";
import { describeServerExample } from "@tenant-integration/server-example-testing";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const python = await ensureVenv({ quiet: true });

describeServerExample({
  name: "Python example server",
  command: [python, join(appDir, "app.py")],
  cwd: appDir,
  env: { PYTHONUNBUFFERED: "1" },
});
