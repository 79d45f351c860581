/**
 * The web app: a login of its own (a user name, no password: a demo), a "Connect your tenant
 * account" button, and a page showing `GET /api/v1/auth/user` of the tenant account connected by
 * whoever is logged in. One `Sessions` holds every user's session, named by the user's name on every
 * call (`sessionOf`, `isSignedIn`, `sessionClient`, `revoke`), so no user is ever served another's
 * tokens. The sign-in itself is the kit's: `signInHandlers`, Web-standard `Request` → `Response`,
 * mounted on Hono routes as they are.
 *
 * @see RFC 6749 §4.1; RFC 9700 §4.7.1 (the sign-in is bound to the browser that began it)
 */
import { randomBytes } from "node:crypto";
import { sessionClient } from "@tenant-integration/client";
import { type Sessions, signInHandlers } from "@tenant-integration/token-manager";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { page, type Shown } from "./page.js";

/** The cookie of the app's own login: a random value naming a login kept on the server. */
export const LOGIN_COOKIE = "app-login";

/**
 * The form of a user's name here. It is the session id of the user's tenant account, so it must fit
 * the kit's rule (`checkSessionId`: 1 to 128 of `A-Z a-z 0-9 - . _ ~ @ + = |`), which this stricter
 * one does.
 */
const USER_NAME = /^[a-z0-9]{1,32}$/;

/** The options of every session's API client: one object, so each session's client is cached with it. */
const API = {};

/** The app's logins: login cookie value → user name. In memory: a real app has its own. */
export type Logins = Map<string, string>;

/** The value of the cookie `name` in a Web-standard request, if any. */
function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The app's logged-in user of a request, from its own login cookie: never a value of the query. */
export function userOf(logins: Logins, request: Request): string | undefined {
  const login = cookieOf(request, LOGIN_COOKIE);
  return login === undefined ? undefined : logins.get(login);
}

/** `POST /login`: logs the browser in as the form's user name (a demo: no password). */
async function logIn(c: Context, logins: Logins): Promise<Response> {
  const name = (await c.req.formData()).get("user");
  if (typeof name !== "string" || !USER_NAME.test(name))
    return c.text("A user name is 1 to 32 lowercase letters and digits.", 400);
  const login = randomBytes(32).toString("base64url");
  logins.set(login, name);
  setCookie(c, LOGIN_COOKIE, login, { path: "/", httpOnly: true, sameSite: "Lax" });
  return c.redirect("/", 303);
}

/** `POST /logout`: forgets the browser's login (the tenant session stays, for the next login). */
function logOut(c: Context, logins: Logins): Response {
  const login = getCookie(c, LOGIN_COOKIE);
  if (login !== undefined) logins.delete(login);
  deleteCookie(c, LOGIN_COOKIE, { path: "/" });
  return c.redirect("/", 303);
}

/** `POST /disconnect`: revokes the logged-in user's tenant session (RFC 7009) and forgets it. */
async function disconnect(c: Context, sessions: Sessions, logins: Logins): Promise<Response> {
  const user = userOf(logins, c.req.raw);
  if (user !== undefined) {
    await sessions.revoke(user).catch((error: unknown) => {
      console.warn(`revocation failed: ${(error as Error).message}`); // the kit's messages hold no token
    });
  }
  return c.redirect("/", 303);
}

/** What the tenant says of the user's connected account: through the user's own session only. */
export async function tenantUser(sessions: Sessions, user: string): Promise<Shown> {
  if (!(await sessions.isSignedIn(user))) return { connected: false };
  try {
    const { data, response } = await sessionClient(sessions, user, API).GET("/api/v1/auth/user");
    if (!response.ok) return { connected: true, problem: `the tenant answered ${response.status}` };
    return { connected: true, tenantUser: JSON.stringify(data, null, 2) };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "NOT_SIGNED_IN" || code === "SESSION_ENDED")
      return { connected: false, problem: "the tenant session ended: connect again" };
    return { connected: true, problem: (error as Error).message };
  }
}

/** `GET /`: the login form, or the logged-in user's page. */
async function home(c: Context, sessions: Sessions, logins: Logins): Promise<Response> {
  c.header("cache-control", "no-store");
  const user = userOf(logins, c.req.raw);
  if (user === undefined) return c.html(page({}));
  return c.html(page({ user, ...(await tenantUser(sessions, user)) }));
}

/**
 * The app on `sessions`, as a Hono app: its fetch handler serves Node (through `@hono/node-server`),
 * Deno, Bun and workers alike. The callback's route is the path of `sessions.redirectUri`.
 */
export function createApp(sessions: Sessions, logins: Logins = new Map()): Hono {
  const signIn = signInHandlers(sessions, {
    sessionOf: (request) => userOf(logins, request), // the app's logged-in user names the session
    onError: (error) => console.warn(`tenant sign-in refused: ${(error as Error).message}`),
  });
  const app = new Hono();
  app.get("/", (c) => home(c, sessions, logins));
  app.post("/login", (c) => logIn(c, logins));
  app.post("/logout", (c) => logOut(c, logins));
  app.post("/connect", (c) => signIn.start(c.req.raw)); // the binding cookie, then 303 to the tenant
  app.get(new URL(sessions.redirectUri).pathname, (c) => signIn.callback(c.req.raw)); // checks, exchanges, stores
  app.post("/disconnect", (c) => disconnect(c, sessions, logins));
  return app;
}
