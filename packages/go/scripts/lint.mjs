// pnpm lint for the Go module: gofmt (no file may need formatting), go vet, staticcheck (pinned,
// run with `go run` so it is no dependency of the module) and the staleness check of api/.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// The first staticcheck release that knows Go 1.26's standard library.
const STATICCHECK = "honnef.co/go/tools/cmd/staticcheck@v0.8.2";

function run(command, args, { expectEmpty = false } = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.error || result.status !== 0 || (expectEmpty && result.stdout.trim() !== "")) {
    console.error(`lint: ${command} ${args.join(" ")} failed${expectEmpty ? " (files listed need gofmt)" : ""}`);
    process.exit(1);
  }
}

run("gofmt", ["-l", "."], { expectEmpty: true });
run("go", ["vet", "./..."]);
run("go", ["run", STATICCHECK, "./..."]);
run("go", ["run", "./internal/cmd/generate", "-check"]);
console.log("lint: gofmt, go vet, staticcheck and the generated code are clean");
