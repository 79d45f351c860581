/**
 * A token manager signed in against an in-process sandbox, the setup the storages' suites share. The
 * kit is handed in (`createSandbox`, `createTokenManager`), as `runWorker`'s is: this package imports
 * nothing of the kit, so the kit's own tests can use it without a dependency cycle.
 */

/** The tenant and client of the in-process sandbox: the token manager's, and so the storage's. */
export const TENANT = Object.freeze({ baseUrl: "http://127.0.0.1:4020", clientId: "fleet-demo" });
export const REDIRECT = "http://127.0.0.1:53682/callback";

/** `inProcessSandbox`, `managerFor` and `signIn`, on the kit handed in. */
export function signedInKit({ createSandbox, createTokenManager }) {
  /** An in-process sandbox (auto-approve) and a fetch that sends to it. */
  function inProcessSandbox() {
    const sandbox = createSandbox({ clients: [{ id: TENANT.clientId, redirectUris: [REDIRECT] }], autoApprove: true });
    const fetch = async (input, init) => sandbox.fetch(new Request(input, init));
    return { sandbox, fetch };
  }

  /** A token manager for the in-process sandbox, on `storage`, with a clock the test can move. */
  function managerFor(storage, sandbox, clock = { offsetMs: 0 }, more = {}) {
    return createTokenManager({
      ...more,
      ...TENANT,
      redirectUri: REDIRECT,
      scopes: ["profile:read"],
      storage,
      fetch: sandbox.fetch,
      now: () => Date.now() + clock.offsetMs,
    });
  }

  return { inProcessSandbox, managerFor, signIn };
}

/** Signs `tm` in: the sandbox approves at once, so its 302 carries the code. */
export async function signIn(tm, sandbox) {
  const { url } = await tm.beginAuthorization();
  const approved = await sandbox.fetch(url, { redirect: "manual" });
  await tm.completeAuthorization(approved.headers.get("location") ?? "");
}
