// Prism as a validating proxy in front of the sandbox, through the shared launcher.
import { createRequire } from "node:module";
import { startPrism, type RunningPrism } from "@tenant-integration/prism-testing";

export { freePort, type RunningPrism } from "@tenant-integration/prism-testing";

/** The bundled contract every tool reads. */
export const BUNDLE_PATH = createRequire(import.meta.url).resolve("@tenant-integration/openapi/openapi.json");

/** Starts `prism proxy <bundle> <upstream> --errors` on a free port and waits until it answers. */
export const startPrismProxy = (upstream: string): Promise<RunningPrism> =>
  startPrism({ bundle: BUNDLE_PATH, upstream });
