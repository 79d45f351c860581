// pnpm test for the Go module: runs `go test -race -json ./...` (test:unit: `-short`, without
// -race: seconds, no real processes) and prints what a reader needs: one line per package, the
// output of each test that failed, and a closing line that tools/ci/test-summary.mjs counts, like
// vitest's and pytest's:
//   go test: 131 passed, 0 failed, 2 skipped (11 packages)
// A test counts once, at its leaves (a test with subtests counts as its subtests). Exits 1 when a
// test, a package or the build failed.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const extra = process.argv.slice(2);
const short = extra.includes("-short");
const race = short ? [] : ["-race"];
// Examples cannot skip themselves under -short as tests do; the ones that start the sandbox process
// are left out of the fast inner loop by name.
const skip = short ? ["-skip", "^ExampleNewTenant$"] : [];
const child = spawn("go", ["test", ...race, "-json", ...skip, ...extra, "./..."], {
  cwd: root,
  stdio: ["ignore", "pipe", "inherit"],
});

const outcomes = new Map(); // "pkg\0Test" -> pass | fail | skip
const output = new Map(); // "pkg\0Test" -> lines, kept until the test passes
const packages = new Map(); // pkg -> pass | fail | skip
let broken = false;

for await (const line of createInterface({ input: child.stdout })) {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    console.log(line); // not an event: go's own words (a build error before -json took over)
    continue;
  }
  const { Action: action, Package: pkg = "", Test: test, Output: text, Elapsed: elapsed } = event;
  if (action === "build-output") process.stdout.write(text ?? "");
  else if (action === "build-fail") broken = true;
  else if (test && action === "output") {
    const key = `${pkg}\0${test}`;
    output.set(key, [...(output.get(key) ?? []), text]);
  } else if (test && (action === "pass" || action === "fail" || action === "skip")) {
    const key = `${pkg}\0${test}`;
    outcomes.set(key, action);
    if (action === "fail") process.stdout.write((output.get(key) ?? []).join(""));
    output.delete(key);
  } else if (!test && (action === "pass" || action === "fail" || action === "skip")) {
    packages.set(pkg, action);
    const count = [...outcomes.keys()].filter((key) => key.startsWith(`${pkg}\0`)).length;
    const what = action === "skip" ? "no test files" : `${count} tests, ${elapsed ?? 0}s`;
    console.log(`${action === "fail" ? "FAIL" : "ok  "} ${pkg} (${what})`);
  } else if (!test && action === "output" && packages.get(pkg) === undefined && /^(FAIL|panic|---)/.test(text ?? "")) {
    process.stdout.write(text);
  }
}
const code = await new Promise((resolve) => child.on("close", resolve));

const names = [...outcomes.keys()];
const leaves = names.filter((name) => !names.some((other) => other.startsWith(`${name}/`)));
const count = (kind) => leaves.filter((name) => outcomes.get(name) === kind).length;
// A package that failed with no failing test (it did not build, it panicked before a test) counts once.
const silentFailures = [...packages].filter(
  ([pkg, state]) =>
    state === "fail" && !leaves.some((name) => name.startsWith(`${pkg}\0`) && outcomes.get(name) === "fail"),
).length;
const failed = count("fail") + silentFailures + (broken && silentFailures === 0 ? 1 : 0);
console.log(`go test: ${count("pass")} passed, ${failed} failed, ${count("skip")} skipped (${packages.size} packages)`);
process.exit(code !== 0 || failed > 0 || packages.size === 0 ? 1 : 0);
