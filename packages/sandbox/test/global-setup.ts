import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Newest modification time of the files below `dir`. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/**
 * The CLI and end-to-end tests run dist/cli.js. Turbo builds it before `test`; when vitest is run
 * on its own, refuse a missing or stale build instead of rebuilding it here, which would rewrite
 * dist/ while other packages' tests read it.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  let built = 0;
  try {
    built = statSync(join(root, "dist", "cli.js")).mtimeMs;
  } catch {
    throw new Error("packages/sandbox/dist is missing: run `pnpm build` (or `pnpm turbo run test`) first.");
  }
  if (newest(join(root, "src")) > built) {
    throw new Error("packages/sandbox/dist is older than src/: run `pnpm build` (or `pnpm turbo run test`) first.");
  }
}
