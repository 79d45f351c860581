/// <reference types="vite/client" />

interface ImportMetaEnv {
  readonly VITE_TENANT_URL?: string;
  readonly VITE_CLIENT_ID?: string;
}
