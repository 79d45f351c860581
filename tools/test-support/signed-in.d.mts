/** The tenant and client of the in-process sandbox: the token manager's, and so the storage's. */
export declare const TENANT: { readonly baseUrl: "http://127.0.0.1:4020"; readonly clientId: "fleet-demo" };
export declare const REDIRECT: "http://127.0.0.1:53682/callback";

/** A fetch that sends to the in-process sandbox. */
export type SandboxFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** What `signIn` needs of a token manager. */
export interface SigningIn {
  beginAuthorization(): Promise<{ readonly url: string }>;
  completeAuthorization(callbackUrl: string): Promise<unknown>;
}

/** `inProcessSandbox`, `managerFor` and `signIn`, on the kit handed in. */
export declare function signedInKit<
  Sandbox extends { fetch(request: Request): Response | Promise<Response> },
  Options extends { storage?: unknown },
  Manager extends SigningIn,
>(kit: {
  createSandbox: (options: { clients: { id: string; redirectUris: string[] }[]; autoApprove: boolean }) => Sandbox;
  createTokenManager: (options: Options) => Manager;
}): {
  /** An in-process sandbox (auto-approve) and a fetch that sends to it. */
  inProcessSandbox(): { sandbox: Sandbox; fetch: SandboxFetch };
  /** A token manager for the in-process sandbox, on `storage`, with a clock the test can move. */
  managerFor(
    storage: NonNullable<Options["storage"]>,
    sandbox: { fetch: SandboxFetch },
    clock?: { offsetMs: number },
    more?: Partial<Options>,
  ): Manager;
  signIn: typeof signIn;
};

/** Signs `tm` in: the sandbox approves at once, so its 302 carries the code. */
export declare function signIn(tm: SigningIn, sandbox: { fetch: SandboxFetch }): Promise<void>;
