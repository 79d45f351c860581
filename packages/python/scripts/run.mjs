#!/usr/bin/env node
// The Python package's turbo tasks: each ensures the repository's venv (tools/python/venv.mjs), then
// runs the Python tools in it. `node scripts/run.mjs <task>`, task one of the package.json scripts.
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "@tenant-integration/python-venv";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
const task = process.argv[2];
const python = await ensureVenv();
const bin = (name) => join(dirname(python), name);

/** Runs one step; stops the task with its exit code when it fails. */
function step(command, args) {
  console.log(`$ ${[command.replace(dirname(python) + "/", ""), ...args].join(" ")}`);
  const result = spawnSync(command, args, { stdio: "inherit", cwd: here });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Test files that start real processes: `test` runs them, `test:unit` leaves them out. */
const PROCESS_TESTS = [
  "conformance",
  "test_docs_guide.py",
  "test_docs_samples.py",
  "test_file_storage_processes.py",
  "test_foreign_values.py",
  "test_generated.py",
  "test_loopback.py",
  "test_packaging.py",
  "test_postgres_storage.py",
  "test_postgres_storage_faults.py",
  "test_redis_cluster.py",
  "test_redis_storage.py",
  "test_running_time_processes.py",
  "test_testing.py",
];

const tasks = {
  generate: () => step(python, ["scripts/generate.py"]),
  build: () => {
    // A clean dist/: the packaging test installs the one wheel there, and twine checks what is uploaded.
    rmSync(join(here, "dist"), { recursive: true, force: true });
    // No --sdist/--wheel: the wheel is built from the sdist, which proves the sdist is complete.
    step(python, ["-m", "build", "--no-isolation", "--outdir", "dist"]);
    const built = readdirSync(join(here, "dist")).map((name) => join("dist", name));
    step(bin("twine"), ["check", "--strict", ...built]);
  },
  lint: () => {
    step(python, ["scripts/generate.py", "--check"]);
    // The sync token manager is generated from the async one: stale or hand-edited sync code fails here.
    step(python, ["scripts/unasync.py", "--check"]);
    step(bin("ruff"), ["check", "."]);
    step(bin("ruff"), ["format", "--check", "."]);
    step(bin("mypy"), []);
  },
  typecheck: () => step(bin("mypy"), []),
  test: () => step(python, ["-m", "pytest", "-q", "-rfE"]),
  // The fast inner loop: leaves out the tests that start real processes (the sandbox, Redis, fleets
  // of Python processes, the generator and packaging runs, the docs' samples).
  "test:unit": () =>
    step(python, [
      "-m",
      "pytest",
      "-q",
      "-rfE",
      ...PROCESS_TESTS.map((file) => `--ignore=tests/${file}`),
      "--deselect=tests/test_async_token_manager.py::test_a_manager_serves_one_event_loop_after_another_over_real_connections",
    ]),
};

const run = tasks[task];
if (!run) {
  console.error(`unknown task ${task}; one of ${Object.keys(tasks).join(", ")}`);
  process.exit(2);
}
run();
