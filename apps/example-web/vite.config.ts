import { defineConfig } from "vite";

// Port 5173 on both `vite` and `vite preview`, because the redirect URI registered for the client
// (`http://localhost:5173/callback`) must match exactly. Both serve index.html for /callback.
export default defineConfig({
  server: { port: 5173, strictPort: true },
  preview: { port: 5173, strictPort: true },
  build: { target: "es2022" },
});
