#!/usr/bin/env node
// Generates src/generated/openapi.ts (openapi-typescript) and src/generated/scopes.ts (the scope
// names of the oauth2 security scheme) from the bundled contract of @tenant-integration/openapi.
// With --check it writes nothing and exits 1 when the committed files differ from a fresh run.
//
// openapi-typescript copies `description` into TSDoc and drops extensions, so a hover would show
// what the contract only assumes (seconds, Bearer, the error codes) as fact. Each `x-assumption`
// is therefore appended to the description of the object that carries it first, with the label
// and wording of the docs site (@tenant-integration/openapi/marks.mjs).
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { appendAssumptions, assumptionText } from "@tenant-integration/openapi/marks.mjs";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "..", "src", "generated");
const check = process.argv.includes("--check");
const require = createRequire(import.meta.url);
const bundlePath = require.resolve("@tenant-integration/openapi/openapi.json");
const contract = JSON.parse(await readFile(bundlePath, "utf8"));

const header = (what) =>
  [
    "/**",
    ` * ${what}`,
    " *",
    " * GENERATED FILE: do not edit by hand. Change the contract in spec/ and run",
    " * `pnpm --filter @tenant-integration/types generate`.",
    " */",
    "",
  ].join("\n");

function scopesModule() {
  const schemes = contract.components?.securitySchemes ?? {};
  const oauth = Object.entries(schemes).filter(([, s]) => s.type === "oauth2");
  if (oauth.length !== 1) throw new Error(`expected one oauth2 security scheme, found ${oauth.length}`);
  const [name, scheme] = oauth[0];
  const scopes = scheme.flows?.authorizationCode?.scopes ?? {};
  const names = Object.keys(scopes);
  if (names.length === 0) throw new Error(`security scheme ${name} lists no scopes`);
  // The service description shows each scope's area and access (read, write or connect), nothing
  // more, so that is all a description may say. The contract's lint enforces the same wording.
  const describe = (scope) => {
    const [area, access] = scope.split(":");
    const text = `${area.replace(/-/g, " ")} area: ${access}`;
    if (scopes[scope] !== text)
      throw new Error(`scope ${scope} is described as "${scopes[scope]}" in the contract; expected "${text}"`);
    return text;
  };
  const lines = [
    header(`Scope names of the \`${name}\` security scheme of the Tenant Integration Service contract.`),
    "/**",
    " * Every scope name of the service, exactly as the service description writes them.",
    " *",
    " * @see RFC 6749 §3.3 (access token scope)",
    " */",
    "export const scopes = [",
    ...names.map((n) => `  ${JSON.stringify(n)},`),
    "] as const;",
    "",
    "/** One scope name of the service (RFC 6749 §3.3). */",
    "export type Scope = (typeof scopes)[number];",
    "",
    "/**",
    ' * Each scope\'s area and access (`"users area: write"`), the only meaning the service description',
    " * gives a scope: what an area holds is not shown.",
    " */",
    "export const scopeDescriptions: Readonly<Record<Scope, string>> = {",
    ...names.map((n) => `  ${JSON.stringify(n)}: ${JSON.stringify(describe(n))},`),
    "};",
    "",
  ];
  return lines.join("\n");
}

/** `text` in lines of at most `width` characters, broken at spaces, as the contract's descriptions are. */
function wrap(text, width = 100) {
  const lines = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line].join("\n");
}

async function openapiModule() {
  // The bundle has only local references, so a copy of it generates what the file itself would.
  const marked = appendAssumptions(structuredClone(contract), (assumption) => wrap(assumptionText(assumption)));
  const ast = await openapiTS(marked, { exportType: false });
  return header("Types of the Tenant Integration Service contract, from openapi-typescript.") + astToString(ast);
}

const files = {
  "openapi.ts": await openapiModule(),
  "scopes.ts": scopesModule(),
};

let stale = [];
for (const [file, content] of Object.entries(files)) {
  const path = join(outDir, file);
  const current = await readFile(path, "utf8").catch(() => null);
  if (current === content) continue;
  if (check) stale.push(relative(process.cwd(), path));
  else {
    await mkdir(outDir, { recursive: true });
    await writeFile(path, content);
    console.log(`wrote ${relative(process.cwd(), path)}`);
  }
}
if (check) {
  if (stale.length) {
    console.error(`Generated types are stale: ${stale.join(", ")}.`);
    console.error("Run `pnpm --filter @tenant-integration/types generate` and commit the result.");
    process.exit(1);
  }
  console.log("Generated types are up to date with the contract.");
}
