#!/usr/bin/env node
// Runs Schemathesis (the Python property-based API fuzzer, pinned in the repository's .venv) against
// the sandbox started as a process, through the bundled contract spec/dist/openapi.json.
//
//   node run.mjs            the CI run: fixed seed, few examples per operation (the `test` task)
//   node run.mjs --long     the longer run of `pnpm bench` (more examples)
//
// The sandbox gets one client registered for the contract's own examples; a bearer token for
// GET /api/v1/auth/user is obtained through the auto-approve flow, as an integration would sign in;
// a second pass calls that route with the token revoked, to check its 401s. The exit status is 0
// only when both passes found nothing; each pass's test-case line ("807 generated, 807 passed") is
// what tools/ci/test-summary.mjs counts.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "../python/venv.mjs";
import { withTestLinks } from "./links.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const require = createRequire(join(here, "package.json"));

/** The client the contract's examples use, registered with both example redirect URIs. */
export const CLIENT_ID = "demo-integration";
export const REDIRECT_URIS = ["http://127.0.0.1:53682/callback", "https://app.example.org/callback"];

/** The CI run and the bench run: same seed, different budgets. */
export const PROFILES = {
  ci: { seed: 19, maxExamples: 50 },
  long: { seed: 19, maxExamples: 500 },
};

/** Starts the sandbox's CLI on a free port; resolves with its URL and a stop function. */
export async function startSandbox() {
  const cli = join(dirname(require.resolve("@tenant-integration/sandbox/package.json")), "dist", "cli.js");
  const child = spawn(
    process.execPath,
    [cli, "--port", "0", "--auto-approve", "--json", "--client", `id=${CLIENT_ID},redirect=${REDIRECT_URIS.join("|")}`],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the sandbox exited (${code}) before printing its URL`)));
  });
  const { url } = JSON.parse(line);
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const base64url = (bytes) => Buffer.from(bytes).toString("base64url");

/**
 * Signs in through the sandbox's auto-approve flow (RFC 6749 §4.1 with RFC 7636 S256) and returns
 * the access token: the authorize redirect carries the code, the token endpoint exchanges it.
 */
export async function signIn(url, scope = "profile:read") {
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash("sha256").update(verifier).digest());
  const query = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URIS[0],
    scope,
    state: base64url(randomBytes(16)),
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const redirect = await fetch(`${url}/oauth/authorize?${query}`, { redirect: "manual" });
  const code = new URL(redirect.headers.get("location") ?? "http://invalid/").searchParams.get("code");
  if (redirect.status !== 302 || !code)
    throw new Error(`sign-in: the authorize endpoint answered ${redirect.status} without a code`);
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URIS[0],
      code,
      code_verifier: verifier,
    }),
  });
  if (response.status !== 200) throw new Error(`sign-in: the token endpoint answered ${response.status}`);
  return (await response.json()).access_token;
}

/** The Schemathesis executable of the repository's venv (tools/python/venv.mjs makes it, from the lock). */
export function schemathesisPath() {
  const path = join(root, ".venv", "bin", "st");
  if (!existsSync(path)) throw new Error(`${path} is missing: create the venv with \`node tools/python/venv.mjs\``);
  return path;
}

/** Runs `st` with `args`; resolves with its exit status and its output, echoed as it comes. */
function st(args, env, { cwd, echo }) {
  // hooks.py adds the contract's grant-type rule for token responses to the checks.
  const hooks = { SCHEMATHESIS_HOOKS: "hooks", PYTHONPATH: [here, process.env.PYTHONPATH].filter(Boolean).join(":") };
  return new Promise((resolve, reject) => {
    const child = spawn(schemathesisPath(), args, {
      cwd,
      env: { ...process.env, ...hooks, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    const take = (chunk) => {
      text += chunk;
      if (echo) process.stdout.write(chunk);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.once("error", reject);
    child.once("exit", (status) => resolve({ status, text }));
  });
}

/** Revokes `token` at the sandbox (RFC 7009 §2.1), so that calls with it are answered 401. */
async function revoke(url, token) {
  const response = await fetch(`${url}/oauth/revoke`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, token_type_hint: "access_token", client_id: CLIENT_ID }),
  });
  if (response.status !== 200) throw new Error(`revoking the run's token: the sandbox answered ${response.status}`);
}

/**
 * The Schemathesis runs against one fresh sandbox, each with its own closing summary:
 *
 * 1. every operation, with a signed-in token for the bearer-protected one (its 200s are checked);
 * 2. GET /api/v1/auth/user again with that token revoked, so that its 401 answers (challenge
 *    header, body, status) are checked against the contract too. That every call is refused is
 *    the point of this pass, so its warnings (Schemathesis reports "only 401") are off.
 *
 * Resolves with the exit status (0 only when both passed) and the counts summed over both runs.
 */
export async function runSchemathesis(profile, { echo = true } = {}) {
  await ensureVenv({ quiet: true });
  schemathesisPath();
  const work = join(here, "test-results");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const contract = JSON.parse(readFileSync(require.resolve("@tenant-integration/openapi/openapi.json"), "utf8"));
  const schema = join(work, "openapi.json");
  writeFileSync(schema, JSON.stringify(withTestLinks(contract), null, 2));
  const sandbox = await startSandbox();
  try {
    const token = await signIn(sandbox.url);
    const common = [
      "--url",
      sandbox.url,
      "--seed",
      String(profile.seed),
      "--max-examples",
      String(profile.maxExamples),
      "--checks",
      "all",
      "--workers",
      "1",
      "--no-color",
      "--generation-database",
      "none",
      "--report",
      "junit,ndjson",
      "--report-dir",
      work,
    ];
    const config = ["--config-file", join(here, "schemathesis.toml")];
    const signedIn = await st([...config, "run", schema, ...common], { ST_BEARER_TOKEN: token }, { cwd: work, echo });
    await revoke(sandbox.url, token);
    const revoked = await st(
      [
        ...config,
        "run",
        schema,
        ...common,
        "--include-path",
        "/api/v1/auth/user",
        "--phases",
        "examples,coverage,fuzzing",
        "--warnings",
        "off",
      ],
      { ST_BEARER_TOKEN: token },
      { cwd: work, echo },
    );
    const counts = [summary(signedIn.text), summary(revoked.text)];
    return {
      status: signedIn.status === 0 && revoked.status === 0 ? 0 : 1,
      generated: counts[0].generated + counts[1].generated,
      failures: counts[0].failures + counts[1].failures,
    };
  } finally {
    await sandbox.stop();
  }
}

/** The counts of Schemathesis's closing summary ("Test cases: N generated, ..." and "N failures"). */
export function summary(text) {
  const generated = Number(/Test cases:\s*\n?\s*(\d+) generated/.exec(text)?.[1] ?? NaN);
  const failures = Number(/(\d+) failures?\b/.exec(text.split("SUMMARY").at(-1) ?? "")?.[1] ?? 0);
  return { generated, failures };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const profile = process.argv.includes("--long") ? PROFILES.long : PROFILES.ci;
  const result = await runSchemathesis(profile);
  process.exitCode = result.status ?? 1;
}
