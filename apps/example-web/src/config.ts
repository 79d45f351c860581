/**
 * Where the app finds its tenant and client id. In order:
 * 1. `<meta name="tenant-integration:tenant-url">` / `…:client-id`, which `serve.mjs` writes into
 *    index.html, so one build can point at any tenant at run time;
 * 2. the Vite env at build time: `VITE_TENANT_URL`, `VITE_CLIENT_ID`;
 * 3. the defaults, matching `tenant-sandbox --port 4020 --client id=demo,redirect=http://localhost:5173/callback`.
 */
export interface AppConfig {
  tenantUrl: string;
  clientId: string;
  /** Must be registered for the client exactly: this page's origin + `/callback`. */
  redirectUri: string;
}

function meta(name: string): string | undefined {
  const content = document.querySelector<HTMLMetaElement>(`meta[name="tenant-integration:${name}"]`)?.content;
  return content === undefined || content === "" ? undefined : content;
}

export function readConfig(): AppConfig {
  return {
    tenantUrl: meta("tenant-url") ?? import.meta.env.VITE_TENANT_URL ?? "http://localhost:4020",
    clientId: meta("client-id") ?? import.meta.env.VITE_CLIENT_ID ?? "demo",
    redirectUri: `${location.origin}/callback`,
  };
}
