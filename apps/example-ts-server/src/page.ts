/**
 * The app's one page, rendered with Hono's `html` tag, which escapes every value it is given. The
 * `data-testid`s are the ones the shared Chromium test of every kit's example server reads
 * (tools/server-example-testing).
 */
import { html } from "hono/html";

/** What the page shows of the logged-in user's tenant account. */
export interface Shown {
  /** Whether the user's session holds tokens. */
  readonly connected: boolean;
  /** `GET /api/v1/auth/user` of the connected account, as indented JSON. */
  readonly tenantUser?: string;
  /** Why the account could not be shown. */
  readonly problem?: string;
}

/** What {@link page} is given: nobody logged in (`{}`), or the logged-in user and their account. */
export type PageState = Partial<Shown> & { readonly user?: string };

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:1rem}";

/** The app's own login form. */
const loginForm = () => html`<form method="post" action="/login">
  <p><label for="user">User name</label> <input id="user" name="user" data-testid="login-name" pattern="[a-z0-9]{1,32}" required></p>
  <button type="submit" data-testid="login">Log in</button>
</form>`;

/** The logged-in user's part: their tenant account, or the button that connects it. */
const account = (
  state: PageState & { user: string },
) => html`<p>Logged in to this app as <strong data-testid="app-user">${state.user}</strong>.</p>
${state.problem ? html`<p data-testid="problem">${state.problem}</p>` : ""}
${
  state.connected
    ? html`<p>Your tenant account:</p>
<pre data-testid="tenant-user">${state.tenantUser ?? ""}</pre>
<form method="post" action="/disconnect"><button type="submit" data-testid="disconnect">Disconnect your tenant account</button></form>`
    : html`<form method="post" action="/connect"><button type="submit" data-testid="connect">Connect your tenant account</button></form>`
}
<form method="post" action="/logout"><button type="submit" data-testid="logout">Log out</button></form>`;

/** The whole page. */
export function page(state: PageState) {
  const { user } = state;
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Example TypeScript server</title><style>${STYLE}</style></head>
<body>
<h1>Example TypeScript server</h1>
${user === undefined ? loginForm() : account({ ...state, user })}
</body>
</html>
`;
}
