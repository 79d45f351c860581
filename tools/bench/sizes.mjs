// Browser bundle bytes (esbuild, minified, then gzip -9) of everything each package exports, and
// of the kit: client + token manager (+ openapi-fetch, which the client bundles in).
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

async function measure(contents, resolveDir) {
  const result = await build({
    stdin: { contents, resolveDir, loader: "js" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].contents;
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length };
}

/** The kit goal of issues 4 and 6: client + token manager + openapi-fetch, gzipped. */
const KIT_GOAL = 6 * 1024;

export async function bundleSizes(resolveDir) {
  const rows = [];
  const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
  const entries = [
    ["@tenant-integration/types", `export * from "@tenant-integration/types";`, null],
    ["openapi-fetch alone (createClient, which the client builds on)", `export { default } from "openapi-fetch";`, null],
    ["@tenant-integration/token-manager", `export * from "@tenant-integration/token-manager";`, 3.5 * 1024],
    ["@tenant-integration/client (with openapi-fetch)", `export * from "@tenant-integration/client";`, null],
    ["kit: client + token manager + openapi-fetch", `export * from "@tenant-integration/client"; export * from "@tenant-integration/token-manager";`, KIT_GOAL],
  ];
  const gzOf = {};
  for (const [name, contents, goal] of entries) {
    const { min, gz } = await measure(contents, resolveDir);
    gzOf[name] = gz;
    rows.push({
      metric: `browser bundle: ${name}`,
      value: `${kb(min)} min / ${kb(gz)} gz`,
      goal: goal ? `≤ ${kb(goal)} gz` : "",
      met: goal ? gz <= goal : null,
    });
  }
  // Where the kit's bytes go: each part as it is added to the bundle (gzip shares strings across
  // parts, so these increments are smaller than the parts measured alone).
  const [, fetchOnly, , clientAndFetch, kit] = entries.map(([name]) => gzOf[name]);
  rows.push({
    metric: "browser bundle: kit, part by part as added (gz)",
    value: `openapi-fetch ${kb(fetchOnly)} + client ${kb(clientAndFetch - fetchOnly)} + token manager ${kb(kit - clientAndFetch)}`,
    goal: "",
    met: null,
  });
  // The floor under the kit goal: openapi-fetch and the token manager with no client at all. What is
  // left of the goal is all the room a client on openapi-fetch could have.
  const floor = await measure(`export { default } from "openapi-fetch"; export * from "@tenant-integration/token-manager";`, resolveDir);
  rows.push({
    metric: "browser bundle: kit without the client (openapi-fetch + token manager)",
    value: `${kb(floor.min)} min / ${kb(floor.gz)} gz: ${floor.gz < KIT_GOAL ? `${kb(KIT_GOAL - floor.gz)} of the kit goal left for the client` : "over the kit goal with no client"}`,
    goal: "",
    met: null,
  });
  rows.push({ metric: "browser bundle: @tenant-integration/sandbox", value: "n/a (a Node server; its app runs on web APIs but is not shipped to browsers)", goal: "", met: null });
  return rows;
}
