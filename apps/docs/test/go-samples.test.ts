// The Go of the docs site, built and run as a Go user would: every Go sample of the reference
// (samples/<operationId>.go) and the quick start's "In Go" program are copied into one module of
// their own outside the repository, which requires the SDK by its module path with a `replace` to
// this checkout's packages/go, so that only what the SDK exports can be used. One `go vet` and one
// `go build` of that module check them all (the build cache stays warm between them). The samples
// run against `pnpm start`'s sandbox in test/samples-run.test.ts; the guide's program signs in once, keeps its tokens in the file for the next run, and the Node
// program of the quick start reads the same file. What the guide says of golang.org/x/oauth2 is a
// `go test` beside its code (on packages/go's tenanttest, whose sandbox clock moves), and what it
// says of the error codes is checked against tokenmanager's list and the catalogue. `go` and
// `gofmt` are found on the PATH, as packages/go's own scripts find them. The guide names the local
// sandbox and a fixed port; the runs put the sandbox's URL and free ports there.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "@tenant-integration/prism-testing";
import { approveInBrowser, programDirectory, runProgram, toJavaScript } from "@tenant-integration/readme-samples/run";
import { DEMO_USER, startSandbox, type RunningSandbox } from "@tenant-integration/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module of the build, without type declarations
import { samplesDir } from "../scripts/code-samples.mjs";
import { codeBlocks, contract, section } from "./support/contract.js";
import { runSample } from "./support/samples.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(docsDir, "..", "..");
const sdkDir = join(repoRoot, "packages", "go");
const SDK_MODULE = "github.com/tenant-integration/sdk/packages/go";
const run = promisify(execFile);

const SAMPLE_TENANT = "http://127.0.0.1:4020";
const SAMPLE_REDIRECT = "http://127.0.0.1:53682/callback";
const GUIDE_TENANT = "http://127.0.0.1:4020";
const GUIDE_REDIRECT = "http://127.0.0.1:53682/callback";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const operationIds = Object.values(contract.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
  (item) => METHODS.filter((method) => item[method]).map((method) => item[method]!.operationId),
);
const sample = (operationId: string): string => readFileSync(join(samplesDir, `${operationId}.go`), "utf8");

/** The Go blocks of the quick start's "### In Go", as gofmt writes them: the YAML of the contract indents with spaces, four for gofmt's tab. */
function guideBlocks(): string[] {
  const guide = section("Quick start");
  const start = guide.indexOf("### In Go");
  if (start === -1) return [];
  const end = guide.indexOf("\n### ", start + 1);
  return codeBlocks(guide.slice(start, end === -1 ? undefined : end), "go").map((block) =>
    block.replace(/^((?: {4})+)/gm, (indent) => "\t".repeat(indent.length / 4)),
  );
}
/** The Go blocks of a guide section, as gofmt writes them (four spaces of the YAML for a tab). */
const sectionGoBlocks = (title: string): string[] =>
  codeBlocks(section(title), "go").map((block) =>
    block.replace(/^((?: {4})+)/gm, (indent) => "\t".repeat(indent.length / 4)),
  );
const testingGuideGo = (): string => sectionGoBlocks("Testing your integration")[0] ?? "";
const moreThanOneProcessGo = (): string => sectionGoBlocks("More than one process")[0] ?? "";
const manyUsersGo = (): string => sectionGoBlocks("A server acting for many users")[0] ?? "";

const guideText = (): string => {
  const guide = section("Quick start");
  return guide.slice(guide.indexOf("### In Go"));
};

/**
 * A `go test` of the guide's oauth2 composition, in the guide's package, on a sandbox whose clock
 * moves (packages/go's tenanttest): the guide's oauth2Client refreshes after the access token's 15
 * minutes, and oauth2.NewClient, whose cache reads the wall clock as the guide says, goes on sending
 * the token when only the sandbox's clock moved.
 */
const GUIDE_OAUTH2_TEST = `package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"${SDK_MODULE}/tenanttest"
)

func status(t *testing.T, client *http.Client, url string) int {
	t.Helper()
	response, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	response.Body.Close()
	return response.StatusCode
}

func TestTheGuidesOAuth2ClientRefreshesAfterTheExpiry(t *testing.T) {
	tenant := tenanttest.New(t)
	client := oauth2Client(context.Background(), tenant.Manager)
	if got := status(t, client, tenant.URL("/api/v1/auth/user")); got != 200 {
		t.Fatalf("oauth2Client: %d, want 200", got)
	}
	tenant.Advance(t, 16*time.Minute)
	if got := status(t, client, tenant.URL("/api/v1/auth/user")); got != 200 {
		t.Fatalf("oauth2Client after the access token expired: %d, want 200", got)
	}
	if n, err := tenant.RefreshCount(); err != nil || n != 1 {
		t.Fatalf("%d refreshes (%v), want 1", n, err)
	}
}

func TestOAuth2NewClientCachesOnTheWallClockAsTheGuideSays(t *testing.T) {
	tenant := tenanttest.New(t)
	ctx := context.Background()
	client := oauth2.NewClient(ctx, tenant.Manager.TokenSource(ctx))
	if got := status(t, client, tenant.URL("/api/v1/auth/user")); got != 200 {
		t.Fatalf("oauth2.NewClient: %d, want 200", got)
	}
	tenant.Advance(t, 16*time.Minute)
	if got := status(t, client, tenant.URL("/api/v1/auth/user")); got != 401 {
		t.Fatalf("oauth2.NewClient after the sandbox's clock moved: %d, not 401: oauth2's cache "+
			"no longer reads the wall clock, so what the guide says of it is stale", got)
	}
}
`;

/** Env of the go tool: go.mod and go.sum completed as a user's `go get` would, no workspace of the machine. */
const goEnv = { ...process.env, GOFLAGS: "-mod=mod -buildvcs=false", GOWORK: "off" };

/** Runs `go <args>` in `cwd` (with `env` added); the exit code and everything it said. */
async function go(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  try {
    const options = { cwd, env: { ...goEnv, ...env }, encoding: "utf8" as const, maxBuffer: 16 * 1024 * 1024 };
    const { stdout, stderr } = await run("go", args, options);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (failure.code === "ENOENT")
      throw new Error("`go` is not on the PATH (e.g. /usr/local/go/bin): the Go samples cannot be built");
    return {
      code: typeof failure.code === "number" ? failure.code : 1,
      output: `${failure.stdout ?? ""}${failure.stderr ?? ""}` || failure.message,
    };
  }
}

/** A module of its own: `module example.com/docs-go`, the SDK required by its path and replaced by this checkout. */
function writeModule(dir: string, packages: Record<string, Record<string, string>>): void {
  writeFileSync(
    join(dir, "go.mod"),
    `module example.com/docs-go\n\ngo 1.26.0\n\nrequire ${SDK_MODULE} v0.0.0\n\nreplace ${SDK_MODULE} => ${sdkDir}\n`,
  );
  cpSync(join(sdkDir, "go.sum"), join(dir, "go.sum"));
  for (const [folder, files] of Object.entries(packages)) {
    mkdirSync(join(dir, folder), { recursive: true });
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, folder, name), source);
  }
}

let sandbox: RunningSandbox;
let moduleDir: string;
let vet: { code: number; output: string };
let build: { code: number; output: string };
let guideRedirect: string;

beforeAll(async () => {
  // A free loopback port in place of the guide's fixed one (other tests and programs use 53682).
  guideRedirect = `http://127.0.0.1:${await freePort()}/callback`;
  sandbox = await startSandbox({
    port: 0,
    autoApprove: true,
    clients: [{ id: "demo-cli", redirectUris: [guideRedirect] }],
  });
  moduleDir = mkdtempSync(join(tmpdir(), "docs-go-"));
  const [guideMain = "", guideOAuth2 = ""] = guideBlocks();
  const atSandbox = (source: string, from: string, redirect: string, to: string): string =>
    source.replaceAll(from, sandbox.url).replaceAll(redirect, to);
  writeModule(moduleDir, {
    // As written: what the reader sees.
    ...Object.fromEntries(
      operationIds.map((operationId) => [`samples/${operationId}`, { "main.go": sample(operationId) }]),
    ),
    guide: { "main.go": guideMain, "oauth2.go": guideOAuth2, "oauth2_test.go": GUIDE_OAUTH2_TEST },
    // "Testing your integration", In Go: a test file of the reader's package, run by `go test` below.
    "testing-guide": {
      "doc.go": "// Package myintegration holds the guide's test file.\npackage myintegration\n",
      "my_integration_test.go": testingGuideGo(),
    },
    // "More than one process", In Python and Go: the Redis program, built and vetted.
    "redis-guide": { "main.go": moreThanOneProcessGo() },
    // "A server acting for many users", In Go: the web server of many users' sessions, built and vetted.
    "sessions-guide": { "main.go": manyUsersGo() },
    // As run: the sandbox in place of the guide's.
    "run-guide": {
      "main.go": atSandbox(guideMain, GUIDE_TENANT, GUIDE_REDIRECT, guideRedirect),
      "oauth2.go": guideOAuth2,
    },
  });
  vet = await go(moduleDir, ["vet", "./..."]);
  build = await go(moduleDir, ["build", "-o", `${join(moduleDir, "bin")}/`, "./..."]);
}, 300_000);

afterAll(async () => {
  await sandbox?.close();
  if (moduleDir) rmSync(moduleDir, { recursive: true, force: true });
});

describe("the Go samples of the reference", () => {
  it("are one per operation of the contract, and none names another", () => {
    const files = readdirSync(samplesDir).filter((file: string) => file.endsWith(".go"));
    expect(files.map((file: string) => file.slice(0, -3)).sort()).toEqual([...operationIds].sort());
  });

  it("build and vet, with the guide's program, in one module outside the repository", () => {
    expect(vet.code, vet.output).toBe(0);
    expect(build.code, build.output).toBe(0);
  });

  it.each(operationIds.map((operationId) => [operationId]))(
    "%s.go builds and vets against packages/go",
    (operationId) => {
      // What go said about this sample's package (`# example.com/docs-go/samples/<id>`, `samples/<id>/main.go:3:2: …`).
      const about = (output: string): string[] =>
        output.split("\n").filter((line) => new RegExp(`samples/${operationId}(/|$)`).test(line));
      expect(about(vet.output), vet.output).toEqual([]);
      expect(about(build.output), build.output).toEqual([]);
    },
  );

  it("a Go sample that stops compiling is caught", async () => {
    const broken = sample("getAuthenticatedUser").replace("manager.Transport(nil)", "manager.RoundTripper(nil)");
    expect(broken).not.toBe(sample("getAuthenticatedUser"));
    mkdirSync(join(moduleDir, "broken"), { recursive: true });
    writeFileSync(join(moduleDir, "broken", "main.go"), broken);
    try {
      const result = await go(moduleDir, ["vet", "./broken"]);
      expect(result.code).not.toBe(0);
      expect(result.output).toMatch(/broken\/main\.go:\d+:\d+: .*RoundTripper/);
    } finally {
      rmSync(join(moduleDir, "broken"), { recursive: true, force: true });
    }
  });

  it("are laid out by gofmt", async () => {
    const { stdout } = await run(
      "gofmt",
      ["-l", ...operationIds.map((operationId) => join(samplesDir, `${operationId}.go`))],
      { encoding: "utf8" },
    );
    expect(stdout.trim()).toBe("");
  });

  it("name pnpm start's sandbox, the client demo-cli and its loopback redirect, in lines that fit the panel", () => {
    for (const operationId of operationIds) {
      const source = sample(operationId);
      expect(source, operationId).toContain(`"${SAMPLE_TENANT}"`);
      expect(source, operationId).toContain('"demo-cli"');
      expect(source, operationId).toContain(`"${SAMPLE_REDIRECT}"`);
      // The panel is narrow: about 70 columns, a tab counted as gofmt's usual four.
      const wide = source.split("\n").filter((line) => line.replaceAll("\t", "    ").length > 72);
      expect(wide, operationId).toEqual([]);
    }
  });
});

describe("the Go guides beside the quick start", () => {
  const about = (folder: string) => (output: string) =>
    output.split("\n").filter((line) => new RegExp(`(^|\\s|\\./)${folder}/`).test(line));
  const sandboxCommand = () => `${process.execPath} ${join(repoRoot, "packages", "sandbox", "dist", "cli.js")}`;

  it("More than one process: the Redis and Redis Cluster program builds and vets, laid out by gofmt", async () => {
    const source = moreThanOneProcessGo();
    expect(source).toContain("redisstorage.New(client");
    expect(source).toContain("redis.NewClusterClient(");
    expect(about("redis-guide")(vet.output), vet.output).toEqual([]);
    expect(about("redis-guide")(build.output), build.output).toEqual([]);
    const { stdout } = await run("gofmt", ["-l", join(moduleDir, "redis-guide")], { encoding: "utf8" });
    expect(stdout.trim()).toBe("");
  });

  it("A server acting for many users: the server of tokenmanager.Sessions builds and vets, laid out by gofmt", async () => {
    const source = manyUsersGo();
    expect(source).toContain("tokenmanager.NewSessions(");
    expect(source).toContain("signinhttp.New(sessions");
    expect(source).toContain("sessions.Client(user)");
    expect(about("sessions-guide")(vet.output), vet.output).toEqual([]);
    expect(about("sessions-guide")(build.output), build.output).toEqual([]);
    const { stdout } = await run("gofmt", ["-l", join(moduleDir, "sessions-guide")], { encoding: "utf8" });
    expect(stdout.trim()).toBe("");
  });

  it("Testing your integration: the tenanttest file passes under go test, and a mutated one fails", async () => {
    const source = testingGuideGo();
    expect(source).toContain("tenanttest.New(t");
    const result = await go(moduleDir, ["test", "-count=1", "-v", "./testing-guide"], {
      TENANT_SANDBOX_COMMAND: sandboxCommand(),
    });
    expect(result.code, result.output).toBe(0);
    for (const name of [
      "TestRefreshesBeforeTheAccessTokenExpires",
      "TestGets403WithoutTheScope",
      "TestIsSignedOutOnceRevoked",
    ])
      expect(result.output).toMatch(new RegExp(`^--- PASS: ${name} `, "m"));
    const mutated = join(moduleDir, "testing-guide-mutated");
    mkdirSync(mutated, { recursive: true });
    writeFileSync(join(mutated, "doc.go"), "package myintegration\n");
    writeFileSync(join(mutated, "my_integration_test.go"), source.replace("n != 1", "n != 0"));
    try {
      const failing = await go(moduleDir, ["test", "-count=1", "./testing-guide-mutated"], {
        TENANT_SANDBOX_COMMAND: sandboxCommand(),
      });
      expect(failing.code).not.toBe(0);
      expect(failing.output).toMatch(/--- FAIL: TestRefreshesBeforeTheAccessTokenExpires/);
    } finally {
      rmSync(mutated, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('the quick start "In Go"', () => {
  it("sits beside the Python one, installs with go get …@latest and names the release tags", () => {
    const headings = [...section("Quick start").matchAll(/^### (.+)$/gm)].map(([, heading]) => heading);
    expect(headings.indexOf("In Go")).toBe(headings.indexOf("In Python") + 1);
    const [install] = codeBlocks(guideText(), "sh");
    expect(install?.trim()).toBe(`go get ${SDK_MODULE}@latest`);
    expect(guideText()).toContain("`packages/go/vX.Y.Z`");
  });

  it("has a program and an oauth2 composition that build and vet against packages/go, laid out by gofmt", async () => {
    const [main, oauth2] = guideBlocks();
    expect(main).toContain("loopback.SignIn(ctx, manager)");
    expect(main).toContain('filestorage.New("~/.config/my-cli/tokens.json")');
    expect(main).toMatch(/errors\.Is\(err, tokenmanager\.Err\w+\)/);
    expect(main).toMatch(/errors\.As\(err, &\w+\)/);
    expect(oauth2).toContain("&oauth2.Transport{Source: manager.TokenSource(ctx)}");
    const about = (output: string): string[] => output.split("\n").filter((line) => /(^|\s|\.\/)guide\//.test(line));
    expect(about(vet.output), vet.output).toEqual([]);
    expect(about(build.output), build.output).toEqual([]);
    const { stdout } = await run("gofmt", ["-l", join(moduleDir, "guide")], { encoding: "utf8" });
    expect(stdout.trim()).toBe("");
  });

  it("says true things of the oauth2 composition: its client refreshes after an expiry, oauth2.NewClient's caches on the wall clock", async () => {
    // tenanttest starts the sandbox of this checkout, as packages/go's own tests do.
    const sandboxCommand = `${process.execPath} ${join(repoRoot, "packages", "sandbox", "dist", "cli.js")}`;
    const result = await go(moduleDir, ["test", "-count=1", "-v", "./guide"], {
      TENANT_SANDBOX_COMMAND: sandboxCommand,
    });
    expect(result.code, result.output).toBe(0);
    // Both ran (tenanttest skips under -short, and a skip is no evidence).
    expect(result.output).toMatch(/^--- PASS: TestTheGuidesOAuth2ClientRefreshesAfterTheExpiry /m);
    expect(result.output).toMatch(/^--- PASS: TestOAuth2NewClientCachesOnTheWallClockAsTheGuideSays /m);
  });

  it("says the Go errors carry the codes of the catalogue: every tokenmanager.Code is listed there", () => {
    const said = '`*tokenmanager.Error` values whose `Code` is the string of the "Error code catalogue"';
    expect(guideText().replace(/\s+/g, " ")).toContain(said);
    const source = readFileSync(join(sdkDir, "tokenmanager", "errors.go"), "utf8");
    const codes = [...source.matchAll(/^\s*Code\w+\s+Code = "([A-Z_]+)"$/gm)].map(([, code]) => code!);
    expect(codes.length).toBeGreaterThan(10);
    const listed = new Set(
      [...section("Error code catalogue").matchAll(/^\| `([A-Za-z_]+)` \|/gm)].map(([, code]) => code!),
    );
    expect(codes.filter((code) => !listed.has(code))).toEqual([]);
  });

  it("uses the local sandbox and the client that `pnpm start` registers", () => {
    const [main = ""] = guideBlocks();
    expect(main).toContain(`"${GUIDE_TENANT}" // the local sandbox; a real tenant: https://<tenant_host>`);
    const client = `id=${/ClientID:\s+"([^"]+)"/.exec(main)?.[1]},redirect=${/RedirectURI:\s+"([^"]+)"/.exec(main)?.[1]}`;
    expect(client).toBe(`id=demo-cli,redirect=${GUIDE_REDIRECT}`);
    expect(readFileSync(join(repoRoot, "tools", "start", "start.mjs"), "utf8")).toContain(client);
    expect(codeBlocks(section("Quick start"), "sh")[0]).toContain(`--client ${client}`);
  });

  it("runs against the sandbox: signs in once, the next run reads the token file (0600), and so does the Node program", async () => {
    const home = mkdtempSync(join(tmpdir(), "docs-go-home-"));
    const nodeDir = programDirectory(docsDir, "go-guide-node-");
    try {
      const first = await runSample([join(moduleDir, "bin", "run-guide")], { HOME: home }, approveInBrowser);
      expect(first.code, first.stderr).toBe(0);
      expect(first.signedIn, first.stderr).toBe(true);
      expect(first.stdout).toMatch(/^200 OK /);
      expect(first.stdout).toContain(String(DEMO_USER["name"]));
      const file = join(home, ".config", "my-cli", "tokens.json");
      expect(statSync(file).mode & 0o777).toBe(0o600);

      const again = await runSample([join(moduleDir, "bin", "run-guide")], { HOME: home }, approveInBrowser);
      expect(again.code, again.stderr).toBe(0);
      expect(again.signedIn, again.stderr).toBe(false);
      expect(again.stdout).toContain(String(DEMO_USER["name"]));

      // The "In Node" program of the same user: no sign-in, the tokens the Go program stored.
      const guide = section("Quick start");
      const [node = ""] = codeBlocks(guide.slice(guide.indexOf("### In Node")), "ts");
      expect(node).toContain("/.config/my-cli/tokens.json");
      const source = toJavaScript(node.replaceAll(GUIDE_TENANT, sandbox.url).replaceAll(GUIDE_REDIRECT, guideRedirect));
      const byNode = await runProgram({
        dir: nodeDir,
        name: "quick-start-node",
        source,
        env: { HOME: home },
        openAuthorizeUrl: approveInBrowser,
      });
      expect(byNode.stderr).toBe("");
      expect(byNode.code).toBe(0);
      expect(byNode.openedAuthorizeUrl, byNode.stdout).toBe(false);
      expect(byNode.stdout).toContain(String(DEMO_USER["name"]));
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(nodeDir, { recursive: true, force: true });
    }
  });
});
