// The tenant's token endpoint takes JSON bodies only (service description §3); oauth4webapi,
// @badgateway/oauth2-client and oidc-client-ts send forms (application/x-www-form-urlencoded), as
// RFC 6749 has it. oauth4webapi and oauth2-client take a fetch of the app's own (oauth4webapi's
// `customFetch`, oauth2-client's `fetch` option), so a working app on either gives them
// `sendFormsAsJson`: the same request with the form's fields as JSON. oidc-client-ts has no such
// option and calls the page's fetch, so a working app on it wraps the page's fetch for the tenant's
// OAuth endpoints alone (`sendTenantFormsAsJson`).

/** `init` with its form body as JSON, or undefined when its body is no form. */
function asJson(init) {
  const headers = new Headers(init.headers);
  if (!headers.get("content-type")?.startsWith("application/x-www-form-urlencoded")) return undefined;
  headers.set("content-type", "application/json");
  return { ...init, headers, body: JSON.stringify(Object.fromEntries(new URLSearchParams(init.body))) };
}

export function sendFormsAsJson(url, init = {}) {
  return fetch(url, asJson(init) ?? init);
}

/** Wraps the page's fetch: form requests to URLs under `oauthUrl` (the tenant's /oauth/) go as JSON. */
export function sendTenantFormsAsJson(oauthUrl) {
  const pageFetch = globalThis.fetch;
  globalThis.fetch = (input, init = {}) => {
    const url = input instanceof Request ? input.url : String(input);
    return pageFetch(input, (url.startsWith(oauthUrl) && asJson(init)) || init);
  };
}
