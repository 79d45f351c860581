// The whole example: sign in with Authorization Code + PKCE, show the user, reload it (the token
// manager refreshes expired tokens on its own), sign out by revoking. Copy what you need.
import { createTenantClient } from "@tenant-integration/client";
import { createTokenManager, webStorage } from "@tenant-integration/token-manager";
import { readConfig } from "./config.js";
import "./style.css";

const config = readConfig();

// Tokens live in localStorage, so every tab of this origin shares one session (and one refresh:
// the manager takes a Web Lock). The pending sign-in (state, PKCE verifier) lives in
// sessionStorage: it belongs to the tab that started it.
const tokens = createTokenManager({
  baseUrl: config.tenantUrl,
  clientId: config.clientId,
  redirectUri: config.redirectUri,
  scopes: ["profile:read"],
  storage: webStorage(localStorage),
  pendingStorage: webStorage(sessionStorage),
});

// The API client asks the token manager for a valid token before each call, and on a 401 tells it
// and retries once.
const api = createTenantClient({ baseUrl: config.tenantUrl, auth: tokens });

const view = document.querySelector<HTMLElement>("#view")!;
view.dataset["testid"] = "view";
document.querySelector('[data-testid="tenant-url"]')!.textContent = config.tenantUrl;

// ---- rendering ---------------------------------------------------------------------------------

type State = "loading" | "signed-out" | "signed-in" | "error";

/** Creates an element; text goes through textContent, never innerHTML. */
function h(
  tag: string,
  props: { testid?: string; text?: string; onclick?: () => void } = {},
  ...children: Node[]
): HTMLElement {
  const element = document.createElement(tag);
  if (props.testid !== undefined) element.dataset["testid"] = props.testid;
  if (props.text !== undefined) element.textContent = props.text;
  if (props.onclick !== undefined) element.addEventListener("click", props.onclick);
  element.append(...children);
  return element;
}

function render(state: State, ...children: Node[]): void {
  view.dataset["state"] = state;
  view.replaceChildren(h("div", { testid: state }, ...children));
}

function showLoading(text: string): void {
  render("loading", h("p", { text }));
}

function showSignedOut(notice?: string): void {
  render(
    "signed-out",
    ...(notice === undefined ? [] : [h("p", { testid: "notice", text: notice })]),
    h("p", { text: "You are not signed in." }),
    h("button", { testid: "sign-in", text: "Sign in", onclick: () => void signIn() }),
  );
}

function showUser(user: Record<string, unknown>): void {
  const name = typeof user["name"] === "string" ? user["name"] : "(no name)";
  render(
    "signed-in",
    h("p", {}, document.createTextNode("Signed in as "), h("strong", { testid: "user-name", text: name })),
    h("pre", { testid: "user", text: JSON.stringify(user, null, 2) }),
    h("button", { testid: "reload-user", text: "Reload user", onclick: () => void loadUser() }),
    h("button", { testid: "sign-out", text: "Sign out", onclick: () => void signOut() }),
  );
}

/** The stable `code` of a token manager error (`STATE_MISMATCH`, `NOT_SIGNED_IN`, …; see its README). */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function showError(title: string, error: unknown): void {
  const code = codeOf(error) ?? (error instanceof Error ? error.name : "UNKNOWN");
  render(
    "error",
    h("h2", { text: title }),
    h("p", { testid: "error-message", text: describe(error) }),
    h("p", {}, document.createTextNode("Code: "), h("code", { testid: "error-code", text: code })),
    h("button", { testid: "back-home", text: "Back", onclick: () => void loadUser() }),
  );
}

/** What to tell the user; token manager errors never contain a token, so their text is safe to show. */
function describe(error: unknown): string {
  switch (codeOf(error)) {
    case "STATE_MISMATCH":
    case "STATE_MISSING":
      return "This sign-in response does not belong to the sign-in this tab started (state mismatch), so it was rejected and nothing was sent to the tenant. Sign in again.";
    case "NO_PENDING_SIGN_IN":
      // Pending sign-ins are found by their state: a changed state finds none, as a used one does.
      return "This sign-in response matches no sign-in in progress in this tab (already used, never started, or its state was changed), so it was rejected and nothing was sent to the tenant. Sign in again.";
    case "STATE_EXPIRED":
      return "The sign-in took too long. Sign in again.";
    case "AUTHORIZATION_DENIED":
      return "You did not allow the access. Sign in again to retry.";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

// ---- actions -----------------------------------------------------------------------------------

async function signIn(): Promise<void> {
  showLoading("Redirecting to the tenant…");
  try {
    const { url } = await tokens.beginAuthorization();
    location.assign(url);
  } catch (error) {
    showError("Could not start the sign-in", error);
  }
}

/** On /callback: check state, exchange the code, store the tokens; nothing is sent on a bad state. */
async function completeSignIn(): Promise<void> {
  showLoading("Completing the sign-in…");
  const callbackUrl = location.href;
  history.replaceState(null, "", "/"); // keep code and state out of the address bar and history
  try {
    await tokens.completeAuthorization(callbackUrl);
  } catch (error) {
    showError("Sign-in failed", error);
    return;
  }
  await loadUser();
}

async function loadUser(): Promise<void> {
  showLoading("Loading the user…");
  try {
    const { data, error, response } = await api.GET("/api/v1/auth/user");
    if (data !== undefined) showUser(data);
    else showError(`Could not load the user (HTTP ${response.status})`, error);
  } catch (error) {
    if (codeOf(error) === "NOT_SIGNED_IN") showSignedOut();
    else if (codeOf(error) === "SESSION_ENDED") showSignedOut("Your session ended. Sign in again.");
    else showError("Could not load the user", error);
  }
}

async function signOut(): Promise<void> {
  showLoading("Signing out…");
  try {
    await tokens.revoke(); // POST /oauth/revoke, then the local tokens are cleared
    showSignedOut("Signed out. The tenant revoked the token.");
  } catch (error) {
    await tokens.signOut(); // the tenant could not be reached: at least forget the tokens here
    showSignedOut(`Signed out on this device; the tenant could not revoke the token (${describe(error)}).`);
  }
}

// Another tab signed out (the tokens were removed from localStorage): follow it.
window.addEventListener("storage", (event) => {
  if (event.key?.endsWith(":tokens") === true && event.newValue === null) showSignedOut("Signed out in another tab.");
});

if (location.pathname === "/callback") void completeSignIn();
else void loadUser();
