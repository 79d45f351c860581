// Clean build (turbo with --force: every task runs, nothing from the cache) and cached rebuild
// (nothing changed: every task from the cache), timed as a user would run them.
import { spawnSync } from "node:child_process";

function timed(root, args) {
  const start = performance.now();
  const result = spawnSync("pnpm", ["turbo", "run", "build", ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
  });
  if (result.status !== 0) throw new Error(`turbo build failed:\n${result.stdout}\n${result.stderr}`);
  return { seconds: (performance.now() - start) / 1000, output: result.stdout };
}

export async function buildTimes(root) {
  const clean = timed(root, ["--force"]);
  const cached = timed(root, []);
  const full = /FULL TURBO/.test(cached.output);
  return [
    { metric: "clean build (turbo run build --force)", value: `${clean.seconds.toFixed(1)} s`, goal: "", met: null },
    {
      metric: "cached rebuild (turbo run build, nothing changed)",
      value: `${cached.seconds.toFixed(2)} s${full ? " (FULL TURBO)" : ""}`,
      goal: "≤ 3 s",
      met: cached.seconds <= 3,
    },
  ];
}
