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

export async function bundleSizes(resolveDir) {
  const rows = [];
  const kb = (n) => `${(n / 1024).toFixed(2)} kB`;
  const entries = [
    ["@tenant-integration/types", `export * from "@tenant-integration/types";`, null],
    ["openapi-fetch alone (createClient, which the client builds on)", `export { default } from "openapi-fetch";`, null],
    ["@tenant-integration/token-manager", `export * from "@tenant-integration/token-manager";`, 3.5 * 1024],
    ["@tenant-integration/client (with openapi-fetch)", `export * from "@tenant-integration/client";`, null],
    ["kit: client + token manager + openapi-fetch", `export * from "@tenant-integration/client"; export * from "@tenant-integration/token-manager";`, 6 * 1024],
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
  rows.push({ metric: "browser bundle: @tenant-integration/sandbox", value: "n/a (a Node server; its app runs on web APIs but is not shipped to browsers)", goal: "", met: null });
  return rows;
}
