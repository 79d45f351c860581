// The Go kit's rows of `pnpm bench` (bench.mjs calls goRows()): the per-call overhead of the Go
// client stack (transport.New over the token manager's Transport) against bare net/http with a static
// header (goal ≤ 5 %) and, for information, against golang.org/x/oauth2's Transport, in process and
// over loopback (packages/go/internal/cmd/bench, in a process of its own; goMethod says how); and
// the rows of a server acting for many users (tokenmanager.Sessions: memory per cached and per
// dropped session, a session's client against a manager built by hand; goSessions, which
// sessions-memory.mjs shows beside the other kits' in its own section). 20 Go
// processes after expiry on one token file and on one Redis are fleets.mjs's rows, in the same
// rounds as the TypeScript and Python fleets (Go's coordination cost is theirs to meet). A row
// whose tool is missing says so instead of failing.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const goDir = join(root, "packages", "go");

/** How the Go rows are measured, written under the table in BENCHMARKS.md (bench.mjs reads it). */
export const goMethod =
  "The Go client as its README builds it (`transport.New(manager.Transport(nil))`: retry and log layers over the token manager's bearer layer, default clock, signed in before the clock starts) against bare net/http with static headers (the bearer token, and the `Accept: application/json` that the service description requires and the bearer layer sets) set by a RoundTripper on a clone of the request, as the RoundTripper contract asks and as golang.org/x/oauth2's Transport does (packages/go/internal/cmd/bench). " +
  "For information, the same rounds also run golang.org/x/oauth2's Transport over a ReuseTokenSource, which reads the clock on every call to check its token's expiry. " +
  "Paired rounds, every contender in each in a random order; a row is the median of the rounds' ratios with their middle half and range, judged by the rule at the top of this file beside its A/A: a second bare net/http client, its own instance, in the same rounds, against the first. " +
  "In process (a RoundTripper answering a prebuilt response: only the layers are measured) the clock is the process's CPU time with GOMAXPROCS 1, so a neighbour's load and the collector's idle workers stay out of the figure; over loopback (an httptest server) it is the wall clock. " +
  "With the default clock the bearer layer reads no clock per call: it sends an armed token, disarmed by a timer on the monotonic clock at the token's freshness deadline and by any change of the session (packages/go/tokenmanager/armed.go); with an injected clock, and for a request whose body cannot be sent again after a 401, every call checks the token's freshness on the clock. " +
  'The row "without the armed token" runs the same client with `WithClock(time.Now)` (the default clock given as an option, which is not armed), in the same rounds: each call then asks `AccessToken`, one clock read and a lock. armed.go is kept because the in-process goal needs it: in 4 paired runs of these rows alone (61 rounds each, on a 2-core machine loaded by other work), the kit without it was 7.7 to 14.6 % over bare net/http, the upper quartile of its rounds\' ratios 1.155 to 1.276 (its middle half never under the 5 %), where the kit with it was −1.2 to +10.2 %. ' +
  "The Go rows of a server acting for many users are in the section \"A server acting for many users\" (`go run ./internal/cmd/bench -row sessions`): on a memory storage of 1,000 signed-in sessions, the live heap after two collections that tokenmanager.Sessions adds once every session made one request (its manager cached, its tokens read, its bearer layer made, its token armed), and what is left once every manager was dropped as idle (the cache's map keeps its buckets at its peak: Go maps do not shrink), 5 rounds, judged by their middle half; and a request for a user, the user changing at each call, through `Sessions.Client(id)` against a manager built by hand (`tokenmanager.New` with `WithSessionID`, its Transport), with a second Sessions against the first as the A/A, in 21 paired rounds of 500 calls each in a new random order on the process's CPU time with GOMAXPROCS 1, after an untimed round that caches every session. " +
  "Rerun: `node tools/bench/go.mjs`, or one row: `go run ./internal/cmd/bench -row in-process` (or `-row loopback`, `-row sessions`) in packages/go; the same contenders as Go benchmarks: `go test ./transport -run '^$' -bench BenchmarkTransport -benchmem` in packages/go.";

/** The go command: on the PATH, or where the Go toolchain is usually installed. */
function goCommand() {
  for (const candidate of ["go", "/usr/local/go/bin/go"]) {
    if (spawnSync(candidate, ["version"], { stdio: "ignore" }).status === 0) return candidate;
  }
  return undefined;
}

/** The overhead rows, from the Go program's JSON lines. */
export function goClientOverhead() {
  const go = goCommand();
  const goal = "≤ 5 % over bare net/http with a static header";
  if (!go) return [{ metric: "Go client per-call overhead", value: "left out: go is not installed", goal, met: null }];
  const run = spawnSync(go, ["run", "./internal/cmd/bench"], { cwd: goDir, encoding: "utf8", maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`go run ./internal/cmd/bench failed: ${run.stderr.trim().split("\n").at(-1)}`);
  return run.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

/**
 * The rows of a server acting for many users (packages/go/internal/cmd/bench/sessions.go): memory per
 * cached and per dropped session of tokenmanager.Sessions (goal ≤ 4 KiB per cached session), and a
 * request for a user through Sessions.Client against a manager built by hand, in paired rounds.
 */
export function goSessions() {
  const go = goCommand();
  const goal = "≤ 4 KiB per cached session";
  if (!go) return [{ metric: "Go memory per cached session", value: "left out: go is not installed", goal, met: null }];
  const run = spawnSync(go, ["run", "./internal/cmd/bench", "-row", "sessions"], {
    cwd: goDir,
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (run.status !== 0)
    throw new Error(`go run ./internal/cmd/bench -row sessions failed: ${run.stderr.trim().split("\n").at(-1)}`);
  return run.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

/**
 * The Go SDK section's rows: the client's overhead. The rows of a server acting for many users
 * (goSessions) are in the section "A server acting for many users" (sessions-memory.mjs), beside
 * the TypeScript and Python ones.
 */
export async function goRows() {
  return goClientOverhead();
}

// `node tools/bench/go.mjs` prints the rows alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await goRows());
