// Prism against this package's own bundle, through the shared launcher.
import { createRequire } from "node:module";
import { startPrism as start, type RunningPrism } from "@tenant-integration/prism-testing";

export { violations, type RunningPrism } from "@tenant-integration/prism-testing";

/** The bundled contract file that Prism serves. */
export const bundlePath = createRequire(import.meta.url).resolve("@tenant-integration/openapi/openapi.yaml");

/** A Prism mock of the bundle on a free loopback port. */
export const startPrism = (): Promise<RunningPrism> => start({ bundle: bundlePath });
