// Entry bundled by esbuild for the browser and the edge runtime: exposes the flow on globalThis.
import { report, runConformance } from "./flow.mjs";
import { httpDriver } from "./http-driver.mjs";

globalThis.Conformance = { runConformance, report, httpDriver };
