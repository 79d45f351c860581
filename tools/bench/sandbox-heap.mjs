// The sandbox's heap after 20,000 sign-ins, each with a refresh, and after its test clock has moved
// past 31 days, against a fresh sandbox in the same process. Runs in its own Node process with
// --expose-gc (this file, with the argument "child"), so that gc() settles the heap before each
// reading and nothing else of the bench shares it. In-process (app.request), no server.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

const SIGN_INS = 20_000;
const DAYS = 31;
const REDIRECT_URI = "http://127.0.0.1:53682/callback";

async function settledHeap() {
  // Several passes with a turn of the event loop between them: finalizers (undici's bodies) run
  // only after a collection, and free more at the next one.
  for (let pass = 0; pass < 4; pass += 1) {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
}

const WARM_UP_SIGN_INS = 2_000;
const newSandbox = (createSandbox) =>
  createSandbox({ clients: [{ id: "bench", redirectUris: [REDIRECT_URI] }], autoApprove: true });

async function measure() {
  const { createSandbox } = await import("@tenant-integration/sandbox");
  // Warm up on a sandbox thrown away after, so that the compiled code of the hot paths is in the
  // fresh figure as well as in the others, and the difference is the sandbox's own data.
  await warmUp(createSandbox);
  const sandbox = newSandbox(createSandbox);
  const fresh = await settledHeap();
  for (let index = 0; index < SIGN_INS; index += 1) await signInAndRefresh(sandbox);
  const loaded = await settledHeap();
  sandbox.clock.advance(DAYS * 24 * 60 * 60);
  const idle = await settledHeap();
  const idleStats = sandbox.stats();
  process.stdout.write(`${JSON.stringify({ fresh, loaded, idle, idleStats })}\n`);
}

// A function of its own, so the thrown-away sandbox is not held by the caller's suspended frame.
async function warmUp(createSandbox) {
  const sandbox = newSandbox(createSandbox);
  for (let index = 0; index < WARM_UP_SIGN_INS; index += 1) await signInAndRefresh(sandbox);
  sandbox.close();
}

async function signInAndRefresh(sandbox) {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: "bench",
    redirect_uri: REDIRECT_URI,
    scope: "profile:read",
    state: "s",
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const authorize = await sandbox.app.request(`/oauth/authorize?${query}`);
  const code = new URL(authorize.headers.get("location")).searchParams.get("code");
  const post = (body) =>
    sandbox.app.request("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const tokens = await (
    await post({
      grant_type: "authorization_code",
      client_id: "bench",
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    })
  ).json();
  const refreshed = await post({
    grant_type: "refresh_token",
    client_id: "bench",
    refresh_token: tokens.refresh_token,
  });
  if (refreshed.status !== 200) throw new Error(`refresh answered ${refreshed.status}`);
}

const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

export async function sandboxHeap() {
  const output = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "child"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`the heap child exited with ${code}`))));
  });
  const { fresh, loaded, idle, idleStats } = JSON.parse(output.trim().split("\n").at(-1));
  const ratio = idle / fresh;
  const left = Object.values(idleStats).reduce((sum, count) => sum + count, 0);
  return [
    {
      metric: `sandbox heap: fresh, after ${SIGN_INS.toLocaleString("en")} sign-ins with a refresh each, after the clock passes ${DAYS} days`,
      value: `${mb(fresh)}, ${mb(loaded)}, ${mb(idle)} (${(ratio * 100).toFixed(0)} % of fresh; ${left} records left)`,
      goal: "after 31 days ≤ 110 % of fresh",
      met: ratio <= 1.1,
      // one heap, measured after a full collection: no rounds to spread
      exact: true,
    },
  ];
}

if (process.argv[2] === "child") await measure();
