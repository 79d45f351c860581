// The quick start's "In Java", compiled and run as a Java user would: its Maven dependency names the
// coordinates packages/java builds, its program compiles with javac (JDK 17, every lint warning an
// error) outside the repository against the jars of packages/java's build, and runs against the
// sandbox `pnpm start` serves: it signs in once, the next run reads the token file (0600), and the
// quick start's Node program reads the same file. What the guides say of the Java errors is held to
// the kit's ErrorCode and the catalogue. The guide names the local sandbox and a fixed port; the runs
// put the started sandbox's URL and free ports there (test/support/samples.ts).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { programDirectory, runProgram, toJavaScript } from "@tenant-integration/readme-samples/run";
import { DEMO_USER } from "@tenant-integration/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, section } from "./support/contract.js";
import {
  approveOnConsentPage,
  atSandbox,
  javaClassName,
  javaSampleClasspath,
  runSample,
  SAMPLE_REDIRECT,
  SAMPLE_TENANT,
  startLikePnpmStart,
  type StartedSandbox,
  tokenFile,
} from "./support/samples.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const javaDir = join(docsDir, "..", "..", "packages", "java");
const run = promisify(execFile);

/** The quick start's "### In Java", up to the next heading. */
function javaGuide(): string {
  const guide = section("Quick start");
  const start = guide.indexOf("### In Java");
  if (start === -1) return "";
  const end = guide.indexOf("\n### ", start + 1);
  return guide.slice(start, end === -1 ? undefined : end);
}

const jdkTool = (name: string): string => {
  const home = process.env["JAVA_HOME"];
  return home ? join(home, "bin", name) : name;
};

/** Compiles `sources` (file name → text) into `dir`/classes; the exit code and what javac said. */
async function javac(dir: string, sources: Record<string, string>): Promise<{ code: number; output: string }> {
  const files = Object.entries(sources).map(([name, text]) => {
    const file = join(dir, "src", name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  });
  const args = ["--release", "17", "-Xlint:all", "-Werror", "-d", join(dir, "classes")];
  try {
    const { stdout, stderr } = await run(jdkTool("javac"), [...args, "-cp", javaSampleClasspath().join(":"), ...files]);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: failure.code ?? 1, output: `${failure.stdout ?? ""}${failure.stderr ?? ""}` || failure.message };
  }
}

/** The command that runs a compiled class of `dir` with HOME's user.home, as a reader's java has it. */
const javaCommand = (dir: string, className: string): string[] => [
  "sh",
  "-c",
  'exec "$0" -Duser.home="$HOME" -cp "$1" "$2"',
  jdkTool("java"),
  [join(dir, "classes"), ...javaSampleClasspath()].join(":"),
  className,
];

/** The program with a method the kit does not have: javac must refuse it. */
const BROKEN = (program: string): string => program.replace("manager.httpClient()", "manager.bearerClient()");

let sandbox: StartedSandbox;
const dirs = { written: "", atSandbox: "", broken: "" };
let compiled: Record<keyof typeof dirs, { code: number; output: string }>;

beforeAll(async () => {
  sandbox = await startLikePnpmStart();
  const [program = ""] = codeBlocks(javaGuide(), "java");
  const file = `${javaClassName(program)}.java`;
  const sources = { written: program, atSandbox: atSandbox(program, sandbox), broken: BROKEN(program) };
  for (const name of Object.keys(dirs) as (keyof typeof dirs)[])
    dirs[name] = mkdtempSync(join(tmpdir(), `docs-java-${name}-`));
  const [written, at, broken] = await Promise.all(
    (Object.keys(dirs) as (keyof typeof dirs)[]).map((name) => javac(dirs[name], { [file]: sources[name] })),
  );
  compiled = { written: written!, atSandbox: at!, broken: broken! };
}, 300_000);

afterAll(async () => {
  await sandbox?.close();
  for (const dir of Object.values(dirs)) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the quick start "In Java"', () => {
  it("sits after the Go one and names the Maven coordinates packages/java builds", () => {
    const headings = [...section("Quick start").matchAll(/^### (.+)$/gm)].map(([, heading]) => heading);
    expect(headings.indexOf("In Java")).toBe(headings.indexOf("In Go") + 1);
    const [dependency = ""] = codeBlocks(javaGuide(), "xml");
    const parent = readFileSync(join(javaDir, "pom.xml"), "utf8");
    const groupId = /<groupId>([^<]+)<\/groupId>/.exec(parent)?.[1];
    expect(dependency).toContain(`<groupId>${groupId}</groupId>`);
    const module = readFileSync(join(javaDir, "token-manager", "pom.xml"), "utf8");
    const artifactId = /<\/parent>[\s\S]*?<artifactId>([^<]+)<\/artifactId>/.exec(module)?.[1];
    expect(dependency).toContain(`<artifactId>${artifactId}</artifactId>`);
    for (const artifact of ["api", "token-manager", "redis", "okhttp", "testing"]) {
      const pom = readFileSync(join(javaDir, artifact, "pom.xml"), "utf8");
      const id = /<\/parent>[\s\S]*?<artifactId>([^<]+)<\/artifactId>/.exec(pom)?.[1];
      expect(javaGuide(), artifact).toContain(`\`${id}\``);
    }
  });

  it("has a program that compiles against packages/java's jars, with every lint warning an error", () => {
    const [program = ""] = codeBlocks(javaGuide(), "java");
    expect(program).toContain("LoopbackSignIn.signIn(manager)");
    expect(program).toContain('FileStorage.of(Path.of("~/.config/my-cli/tokens.json"))');
    expect(program).toContain("catch (SessionEndedException e)");
    expect(program).toContain('"demo-cli", "http://127.0.0.1:53682/callback"');
    expect(program).toContain(`"${SAMPLE_TENANT}"; // the local sandbox; a real tenant: https://<tenant_host>`);
    expect(compiled.written.code, compiled.written.output).toBe(0);
  });

  it("runs against the sandbox: signs in once, the next run reads the token file (0600), and so does the Node program", async () => {
    const [program = ""] = codeBlocks(javaGuide(), "java");
    const home = mkdtempSync(join(tmpdir(), "docs-java-home-"));
    const nodeDir = programDirectory(docsDir, "java-guide-node-");
    try {
      expect(compiled.atSandbox.code, compiled.atSandbox.output).toBe(0);
      const command = javaCommand(dirs.atSandbox, javaClassName(program));

      const first = await runSample(command, { HOME: home });
      expect(first.code, first.stderr).toBe(0);
      expect(first.signedIn, first.stderr).toBe(true);
      expect(first.stdout).toMatch(/^200 \{/);
      expect(first.stdout).toContain(String(DEMO_USER["name"]));
      expect(statSync(tokenFile(home)).mode & 0o777).toBe(0o600);

      const again = await runSample(command, { HOME: home });
      expect(again.code, again.stderr).toBe(0);
      expect(again.signedIn, again.stderr).toBe(false);
      expect(again.stdout).toContain(String(DEMO_USER["name"]));

      // The "In Node" program of the same user: no sign-in, the tokens the Java program stored.
      const guide = section("Quick start");
      const [node = ""] = codeBlocks(guide.slice(guide.indexOf("### In Node")), "ts");
      expect(node).toContain("/.config/my-cli/tokens.json");
      const byNode = await runProgram({
        dir: nodeDir,
        name: "quick-start-node",
        source: toJavaScript(atSandbox(node, sandbox)),
        env: { HOME: home },
        openAuthorizeUrl: async (url: string) => fetch(await approveOnConsentPage(url)),
      });
      expect(byNode.stderr).toBe("");
      expect(byNode.code).toBe(0);
      expect(byNode.openedAuthorizeUrl, byNode.stdout).toBe(false);
      expect(byNode.stdout).toContain(String(DEMO_USER["name"]));
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(nodeDir, { recursive: true, force: true });
    }
  }, 180_000);

  it("a program that stops compiling is caught", () => {
    const [program = ""] = codeBlocks(javaGuide(), "java");
    expect(BROKEN(program)).not.toBe(program);
    expect(compiled.broken.code).not.toBe(0);
    expect(compiled.broken.output).toMatch(/bearerClient/);
  });

  it("names the redirect the samples name", () => {
    expect(javaGuide()).toContain(SAMPLE_REDIRECT);
  });
});

describe("the Java errors in the guides", () => {
  const catalogue = (): Set<string> =>
    new Set([...section("Error code catalogue").matchAll(/^\| `([A-Za-z_]+)` \|/gm)].map(([, code]) => code!));
  /** The constants of a Java enum: its lines that are one upper-case name and a comma or nothing. */
  const constants = (file: string, from = 0): string[] =>
    [
      ...readFileSync(file, "utf8")
        .slice(from)
        .matchAll(/^\s+([A-Z][A-Z_]+),?$/gm),
    ].map(([, name]) => name!);

  it("says Java's TokenManagerException carries the catalogue's codes as ErrorCode", () => {
    const said =
      "In Java the error is a `TokenManagerException` whose `code()` is the `ErrorCode` constant of that name";
    expect(section("Error code catalogue").replace(/\s+/g, " ")).toContain(said);
  });

  it("lists every ErrorCode of the token manager and every code of the test kit in the catalogue", () => {
    const errorCodes = constants(
      join(javaDir, "token-manager/src/main/java/io/github/tenantintegration/tokenmanager/ErrorCode.java"),
    );
    expect(errorCodes).toContain("SESSION_ENDED");
    expect(errorCodes).toContain("ABORTED");
    expect(errorCodes.length).toBeGreaterThan(20);
    const sandboxFile = join(
      javaDir,
      "testing/src/main/java/io/github/tenantintegration/tenanttest/SandboxException.java",
    );
    const sandboxCodes = constants(sandboxFile, readFileSync(sandboxFile, "utf8").indexOf("enum Code"));
    expect(sandboxCodes).toEqual(["SANDBOX_FAILED", "SIGN_IN_FAILED"]);
    const listed = catalogue();
    expect([...errorCodes, ...sandboxCodes].filter((code) => !listed.has(code))).toEqual([]);
  });
});
