// The tenant's token endpoint takes JSON bodies only (service description §3); oauth4webapi and
// @badgateway/oauth2-client send forms (application/x-www-form-urlencoded), as RFC 6749 has it. Both
// take a fetch of the app's own (oauth4webapi's `customFetch`, oauth2-client's `fetch` option), so a
// working app on either gives them this one: the same request with the form's fields as JSON.
export function sendFormsAsJson(url, init = {}) {
  const headers = new Headers(init.headers);
  if (headers.get("content-type")?.startsWith("application/x-www-form-urlencoded")) {
    headers.set("content-type", "application/json");
    return fetch(url, { ...init, headers, body: JSON.stringify(Object.fromEntries(new URLSearchParams(init.body))) });
  }
  return fetch(url, init);
}
