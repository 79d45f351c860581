// The operation samples of the reference (samples/<operationId>.<extension>) as programs, run
// against the sandbox that `pnpm start` serves, as a reader runs them. One entry of LANGUAGES per
// kit language: how to make a runnable program of a sample (transpile, build). A new language (Java)
// is one more entry: its extension, and a `prepare` that returns each operation's command line.
//
// The samples name `pnpm start`'s sandbox (http://127.0.0.1:4020) and its command-line client
// (`demo-cli`, redirect http://127.0.0.1:53682/callback). A test starts the same sandbox command with
// the same client, on free ports (other tests and the reader's own `pnpm start` may hold 4020 and
// 53682), with its test routes on so that the effect of each run is read from the tenant's event
// log (`GET /__sandbox/events`); `atSandbox` puts those ports in a sample's text, nothing else.
// Languages: TypeScript, Python, Go and Java.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "@tenant-integration/prism-testing";
import { programDirectory, toJavaScript } from "@tenant-integration/readme-samples/run";
// @ts-expect-error -- a plain ES module of the build, without type declarations
import { samplesDir } from "../../scripts/code-samples.mjs";
// @ts-expect-error -- a plain ES module of the tools, without type declarations
import { ensureVenv } from "../../../../tools/python/venv.mjs";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const repoRoot = join(docsDir, "..", "..");
const runFile = promisify(execFile);

/** What the samples name: the sandbox `pnpm start` serves, and the client and redirect it registers. */
export const SAMPLE_TENANT = "http://127.0.0.1:4020";
export const SAMPLE_CLIENT = "demo-cli";
export const SAMPLE_REDIRECT = "http://127.0.0.1:53682/callback";

/** The operations of the samples, in the order a reader meets them. */
export const OPERATIONS = ["authorize", "exchangeToken", "getAuthenticatedUser", "revokeToken"] as const;
export type OperationId = (typeof OPERATIONS)[number];

/** A sample's text, as the reader sees it. */
export const sampleSource = (file: string): string => readFileSync(join(samplesDir as string, file), "utf8");

/** `pnpm start`'s command-line client, as tools/start/start.mjs registers it (`id=…,redirect=…`). */
export function startedClientSpec(): string {
  const start = readFileSync(join(repoRoot, "tools", "start", "start.mjs"), "utf8");
  const spec = /const cliClient = "([^"]+)"/.exec(start)?.[1];
  if (!spec) throw new Error("tools/start/start.mjs no longer names its command-line client as `const cliClient`");
  return spec;
}

/** `pnpm start`'s sandbox port when SANDBOX_PORT is not set. */
export function startedSandboxPort(): number {
  const start = readFileSync(join(repoRoot, "tools", "start", "start.mjs"), "utf8");
  return Number(/SANDBOX_PORT \?\? (\d+)/.exec(start)?.[1]);
}

export interface SandboxEvent {
  seq: number;
  endpoint: "token" | "revoke";
  grantType: string | null;
  clientId: string | null;
  status: number;
  outcome: string;
  detail: string | null;
}

export interface StartedSandbox {
  /** The sandbox's URL (`http://127.0.0.1:<port>`). */
  url: string;
  /** The redirect URI registered for `demo-cli`, on a free port in place of 53682. */
  redirectUri: string;
  /** The tenant's event log, from `GET /__sandbox/events`. */
  events(): Promise<SandboxEvent[]>;
  /** Moves the sandbox's clock (`POST /__sandbox/clock`). */
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The sandbox `pnpm start` serves (the built `tenant-sandbox`, its command-line client), on a free
 * port and with the client's redirect on a free port, plus `--test-clock` for the event log.
 */
export async function startLikePnpmStart(): Promise<StartedSandbox> {
  const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
  const spec = startedClientSpec().replace(SAMPLE_REDIRECT, redirectUri);
  if (!spec.includes(redirectUri)) throw new Error(`pnpm start's client ${startedClientSpec()} is not the samples'`);
  const cli = join(repoRoot, "packages", "sandbox", "dist", "cli.js");
  const child = spawn(process.execPath, [cli, "--port", "0", "--client", spec, "--test-clock", "--json"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on("exit", (code) => reject(new Error(`tenant-sandbox exited (${code}): ${err}`)));
  });
  return {
    url,
    redirectUri,
    async events() {
      const response = await fetch(`${url}/__sandbox/events`);
      return ((await response.json()) as { events: SandboxEvent[] }).events;
    },
    async advance(seconds) {
      const response = await fetch(`${url}/__sandbox/clock`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ advanceSeconds: seconds }),
      });
      if (!response.ok) throw new Error(`POST /__sandbox/clock: ${response.status}`);
    },
    close: () => stop(child),
  };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** A sample's text with the started sandbox's ports in place of `pnpm start`'s: nothing else changes. */
export function atSandbox(source: string, sandbox: StartedSandbox): string {
  return source.replaceAll(SAMPLE_TENANT, sandbox.url).replaceAll(SAMPLE_REDIRECT, sandbox.redirectUri);
}

/**
 * The person at the browser, on a tenant that shows its consent page (as `pnpm start`'s does):
 * opens the authorize URL, presses Approve (the form posts its request id to the sandbox's consent
 * route) and returns where the tenant sends the browser: the redirect URI with `code` and `state`.
 */
export async function approveOnConsentPage(authorizeUrl: string): Promise<string> {
  const page = await fetch(authorizeUrl, { redirect: "manual" });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`the authorize URL answered ${page.status}: ${html.slice(0, 200)}`);
  const requestId = /name="request_id" value="([^"]+)"/.exec(html)?.[1];
  if (!requestId) throw new Error("the consent page has no request_id");
  const decision = await fetch(new URL("/__sandbox/consent", authorizeUrl), {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ request_id: requestId, decision: "approve" }),
  });
  const location = decision.headers.get("location");
  if (decision.status !== 302 || !location) throw new Error(`Approve answered ${decision.status}, not a redirect`);
  return location;
}

/** Approves, then lets the browser follow the redirect to the program's loopback receiver. */
async function signInInBrowser(authorizeUrl: string): Promise<void> {
  const callback = await fetch(await approveOnConsentPage(authorizeUrl));
  await callback.text();
  if (!callback.ok) throw new Error(`the redirect URI answered ${callback.status}`);
}

export interface SampleRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Whether the program printed an authorize URL, which the person then opened and approved. */
  signedIn: boolean;
}

const AUTHORIZE_URL = /https?:\/\/\S+\/oauth\/authorize\?\S+/;

/**
 * Runs a sample's program with `env` (HOME, say); when it prints an authorize URL, on either stream,
 * the person opens it once and approves: on the consent page by default, or as `person` does (a
 * tenant started with auto-approve answers the authorize URL with the redirect itself).
 */
export async function runSample(
  argv: string[],
  env: Record<string, string>,
  person: (authorizeUrl: string) => Promise<unknown> = signInInBrowser,
): Promise<SampleRun> {
  const [command, ...args] = argv;
  // BROWSER=false: Python's webbrowser finds no browser and the sign-in prints the URL instead.
  const child = spawn(command!, args, { env: { ...process.env, BROWSER: "false", ...env }, stdio: "pipe" });
  child.stdin.end();
  let [stdout, stderr] = ["", ""];
  let opened: Promise<unknown> | undefined;
  const watch = () => {
    const url = AUTHORIZE_URL.exec(`${stdout}\n${stderr}`)?.[0];
    if (url && !opened) {
      opened = person(url).catch((error: unknown) => {
        child.kill(); // it would wait for a callback that never comes
        return error;
      });
    }
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    watch();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    watch();
  });
  const code = await new Promise<number | null>((resolve, reject) => child.on("close", resolve).on("error", reject));
  const failure = await opened;
  if (failure instanceof Error) throw failure;
  return { code, stdout, stderr, signedIn: opened !== undefined };
}

/** A kit language of the samples: how its samples become programs. */
export interface SampleLanguage {
  /** The samples' extension: `samples/<operationId>.<extension>`. */
  extension: string;
  label: string;
  /** A fresh directory for the programs (default: one under the system's temporary directory). */
  workDirectory?(): string;
  /**
   * Makes a program of each operation's sample (its text already `atSandbox`) under `work`, a
   * directory of its own, and returns each one's command line.
   */
  prepare(sources: Record<OperationId, string>, work: string): Promise<Record<OperationId, string[]>>;
}

/** TypeScript: types erased, run by the Node that runs the tests, in a directory of this app (its packages). */
const typescript: SampleLanguage = {
  extension: "ts",
  label: "TypeScript",
  // Under this app's node_modules/.cache, so that the imports resolve to its packages as a user's would.
  workDirectory: () => programDirectory(docsDir, "samples-run-"),
  async prepare(sources, work) {
    const programs = {} as Record<OperationId, string[]>;
    for (const operationId of OPERATIONS) {
      const file = join(work, `${operationId}.mjs`);
      writeFileSync(file, toJavaScript(sources[operationId]));
      programs[operationId] = [process.execPath, file];
    }
    return programs;
  },
};

/** Python: run by the repository's venv, where `tenant_integration` is installed from packages/python. */
const python: SampleLanguage = {
  extension: "py",
  label: "Python",
  async prepare(sources, work) {
    const interpreter = (await ensureVenv({ quiet: true })) as string;
    const programs = {} as Record<OperationId, string[]>;
    for (const operationId of OPERATIONS) {
      const file = join(work, `${operationId}.py`);
      writeFileSync(file, sources[operationId]);
      programs[operationId] = [interpreter, file];
    }
    return programs;
  },
};

const SDK_MODULE = "github.com/tenant-integration/sdk/packages/go";

/** Go: one module outside the repository requiring the SDK by its path, replaced by packages/go; one build. */
const go: SampleLanguage = {
  extension: "go",
  label: "Go",
  async prepare(sources, work) {
    const sdk = join(repoRoot, "packages", "go");
    writeFileSync(
      join(work, "go.mod"),
      `module example.com/samples\n\ngo 1.26.0\n\nrequire ${SDK_MODULE} v0.0.0\n\nreplace ${SDK_MODULE} => ${sdk}\n`,
    );
    cpSync(join(sdk, "go.sum"), join(work, "go.sum"));
    for (const operationId of OPERATIONS) {
      mkdirSync(join(work, operationId));
      writeFileSync(join(work, operationId, "main.go"), sources[operationId]);
    }
    const env = { ...process.env, GOFLAGS: "-mod=mod -buildvcs=false", GOWORK: "off" };
    await runFile("go", ["build", "-o", `${join(work, "bin")}/`, "./..."], { cwd: work, env, maxBuffer: 1 << 24 });
    return Object.fromEntries(OPERATIONS.map((id) => [id, [join(work, "bin", id)]])) as Record<OperationId, string[]>;
  },
};

const javaDir = join(repoRoot, "packages", "java");

/** A tool of the JDK: $JAVA_HOME/bin/<name> when JAVA_HOME is set, else <name> on the PATH (as packages/java's scripts). */
const jdkTool = (name: string): string => {
  const home = process.env["JAVA_HOME"];
  return home && existsSync(join(home, "bin", name)) ? join(home, "bin", name) : name;
};

/**
 * The jars a Java user of the samples depends on, as `pnpm build` of packages/java packages them:
 * tenant-integration-api and tenant-integration-token-manager (the JDK only, no other dependency).
 */
export function javaSampleClasspath(): string[] {
  return ["api", "token-manager"].map((module) => {
    const target = join(javaDir, module, "target");
    const jar = (existsSync(target) ? readdirSync(target) : []).find((name) =>
      new RegExp(`^tenant-integration-${module}-[^-]+(-SNAPSHOT)?\\.jar$`).test(name),
    );
    if (!jar) throw new Error(`packages/java/${module}/target has no jar: run pnpm build (a JDK 17 or newer)`);
    return join(target, jar);
  });
}

/** The public class a Java sample declares, which names its file (`public class Authorize` → Authorize.java). */
export const javaClassName = (source: string): string => {
  const name = /^public (?:final )?class (\w+)/m.exec(source)?.[1];
  if (!name) throw new Error("a Java sample declares no public class");
  return name;
};

/**
 * Java: each sample in the file its public class names, compiled by one javac (JDK 17, every lint
 * warning an error) against the kit's jars, outside the repository; each runs with `java -cp`. The
 * JVM takes its home directory from the password database, not $HOME, so the run passes $HOME on as
 * `user.home`, which a reader's own `java` already has.
 */
const java: SampleLanguage = {
  extension: "java",
  label: "Java",
  async prepare(sources, work) {
    const classpath = javaSampleClasspath();
    const files = OPERATIONS.map((operationId) => {
      const file = join(work, "src", `${javaClassName(sources[operationId])}.java`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, sources[operationId]);
      return file;
    });
    const classes = join(work, "classes");
    await runFile(
      jdkTool("javac"),
      ["--release", "17", "-Xlint:all", "-Werror", "-d", classes, "-cp", classpath.join(":"), ...files],
      { maxBuffer: 1 << 24 },
    );
    const launch = [jdkTool("java"), [classes, ...classpath].join(":")];
    // sh passes the $HOME of the run (runSample's env) to the JVM as user.home.
    const command = 'exec "$0" -Duser.home="$HOME" -cp "$1" "$2"';
    return Object.fromEntries(
      OPERATIONS.map((id) => [id, ["sh", "-c", command, ...launch, javaClassName(sources[id])]]),
    ) as Record<OperationId, string[]>;
  },
};

/** Every kit language with samples; curl is run as a chain of its own (test/curl-samples.test.ts). */
export const LANGUAGES: SampleLanguage[] = [typescript, python, go, java];

/** Prepares `language`'s programs of every operation, at `sandbox`; the directory goes with `cleanup()`. */
export async function preparePrograms(
  language: SampleLanguage,
  sandbox: StartedSandbox,
): Promise<{ programs: Record<OperationId, string[]>; cleanup: () => void }> {
  const work = language.workDirectory?.() ?? mkdtempSync(join(tmpdir(), `samples-${language.extension}-`));
  const sources = Object.fromEntries(
    OPERATIONS.map((id) => [id, atSandbox(sampleSource(`${id}.${language.extension}`), sandbox)]),
  ) as Record<OperationId, string>;
  const programs = await language.prepare(sources, work);
  return {
    programs,
    cleanup: () => rmSync(work, { recursive: true, force: true }),
  };
}

/** The stored tokens of the samples' token file (`~/.config/my-cli/tokens.json` under `home`), or undefined. */
export function storedTokens(home: string, sandbox: StartedSandbox): Record<string, unknown> | undefined {
  const file = tokenFile(home);
  let entries: Record<string, string>;
  try {
    entries = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
  } catch {
    return undefined;
  }
  const value = entries[`tenant-integration:${sandbox.url}:${SAMPLE_CLIENT}:tokens`];
  return value === undefined ? undefined : (JSON.parse(value) as Record<string, unknown>);
}

export const tokenFile = (home: string): string => join(home, ".config", "my-cli", "tokens.json");

/**
 * The token file as a program reads it `seconds` later: the stored token record received that much
 * earlier (spec/token-store: expiry is `received_at + expires_in`). Together with the sandbox's clock
 * moved as far, it is the reader running the sample again that much later.
 */
export function ageStoredTokens(home: string, sandbox: StartedSandbox, seconds: number): void {
  const file = tokenFile(home);
  const entries = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
  const key = `tenant-integration:${sandbox.url}:${SAMPLE_CLIENT}:tokens`;
  const record = JSON.parse(entries[key]!) as { received_at: number };
  record.received_at -= seconds * 1000;
  entries[key] = JSON.stringify(record);
  writeFileSync(file, JSON.stringify(entries), { mode: 0o600 });
}

/** A fresh home directory for one language's runs. */
export const freshHome = (): string => mkdtempSync(join(tmpdir(), "samples-home-"));
