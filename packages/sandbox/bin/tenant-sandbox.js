#!/usr/bin/env node
// The `tenant-sandbox` command. It is a committed file that loads the build when it runs, so that
// pnpm can link the bin in a fresh clone before anything is built: a bin pointing into dist/ does
// not exist at install time, and pnpm warns once per package that depends on the sandbox.
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("tenant-sandbox: dist/cli.js is missing; run `pnpm build` first\n");
  process.exit(1);
}
await import(cli.href);
