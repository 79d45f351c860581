// The floor: the API call on openapi-fetch with a token the app got elsewhere, and nothing else (no
// sign-in, no refresh, no revocation). No app can ship this alone; it shows what the auth costs in
// each of the other apps. Bundled by sizes.mjs, never run.
import createClient from "openapi-fetch";
import { baseUrl } from "./tenant.js";

const client = createClient({ baseUrl });
client.use({
  onRequest({ request }) {
    request.headers.set("Authorization", `Bearer ${localStorage.getItem("access_token")}`);
    return request;
  },
});

export async function currentUser() {
  const { data, error } = await client.GET("/api/v1/auth/user");
  if (error) throw new Error("GET /api/v1/auth/user failed");
  return data;
}
