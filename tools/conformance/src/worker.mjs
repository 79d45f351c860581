// The worker that workerd (Cloudflare's Workers runtime) serves: POST the sandbox's coordinates,
// get the conformance results back. `flow-bundle.js` is entry-bundle.mjs bundled by esbuild.
import "./flow-bundle.js";

export default {
  async fetch(request) {
    const { baseUrl, clientId, redirectUri } = await request.json();
    const { runConformance, httpDriver } = globalThis.Conformance;
    return Response.json(await runConformance({ baseUrl, clientId, redirectUri, driver: httpDriver(baseUrl) }));
  },
};
