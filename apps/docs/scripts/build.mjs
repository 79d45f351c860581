#!/usr/bin/env node
// Builds dist/index.html: the Redoc reference of the bundled contract, with Redoc's scripts inlined
// (--inlineBundle) so the page renders offline, the kit's theme (template.hbs) and Redoc's footer
// logo swapped from its CDN to an inline image. Fails when the page would still fetch a remote file.
//
// Before Redoc reads it, a copy of the bundle is prepared for readers (scripts/prepare.mjs): every
// x-assumption is written into the description of the thing it qualifies, so the reference shows
// it where the operation or field is described, and the guides' `sequence` and `states` blocks
// become inline SVG diagrams (scripts/diagrams.mjs). Every operation gets its TypeScript, Python, Go
// and curl code samples (samples/<operationId>.ts|.py|.go|.sh) as x-codeSamples (scripts/code-samples.mjs). The
// "Conformance" page shows the conformance suite's last recorded run (scripts/conformance.mjs), the
// "Changelog" page the released notes and the pending changesets (scripts/changelog.mjs), the "Map of
// the code" page which module holds each concept in each kit (scripts/code-map.mjs).
// The contract itself (the bundled openapi.yaml and openapi.json, not the reader's copy) is copied
// beside index.html, where the page's download links (redocly.yaml `downloadUrls`) point.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { withCodeSamples } from "./code-samples.mjs";
import { withChangelog } from "./changelog.mjs";
import { withCodeMap } from "./code-map.mjs";
import { withConformance } from "./conformance.mjs";
import { prepareForReaders } from "./prepare.mjs";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(docsDir, "package.json"));
const contract = JSON.parse(readFileSync(require.resolve("@tenant-integration/openapi/openapi.json"), "utf8"));
// The conformance suite's last recorded run (pnpm conformance), for the "Conformance" page.
const conformance = JSON.parse(
  readFileSync(require.resolve("@tenant-integration/conformance/results/last-run.json"), "utf8"),
);
const work = mkdtempSync(join(tmpdir(), "docs-build-"));
const bundle = join(work, "openapi.json");
// Each operation's TypeScript, Python, Go and curl samples (samples/<operationId>.ts|.py|.go|.sh) as x-codeSamples.
// Then the "Conformance" page, the "Changelog" page (scripts/changelog.mjs) and the "Map of the code"
// (scripts/code-map.mjs), all about the kit.
const repoRoot = join(docsDir, "..", "..");
writeFileSync(
  bundle,
  JSON.stringify(
    withCodeMap(
      withChangelog(withConformance(prepareForReaders(withCodeSamples(contract)), conformance), repoRoot),
      repoRoot,
    ),
    null,
    2,
  ),
);
const output = join(docsDir, "dist", "index.html");
mkdirSync(dirname(output), { recursive: true });
const redocly = join(docsDir, "node_modules", ".bin", "redocly");

const result = spawnSync(
  redocly,
  [
    "build-docs",
    bundle,
    "--inlineBundle",
    "--config",
    join(docsDir, "redocly.yaml"),
    "--template",
    join(docsDir, "template.hbs"),
    "--title",
    "Tenant Integration Service: API reference and guides",
    "-o",
    output,
  ],
  {
    cwd: docsDir,
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
  },
);
rmSync(work, { recursive: true, force: true });
// Keep the useful lines, drop the Node 20 deprecation box.
process.stdout.write(
  result.stdout
    .split("\n")
    .filter((line) => !/[║╔╚]/.test(line))
    .join("\n"),
);
if (result.status !== 0) {
  console.error(`redocly build-docs failed (exit ${result.status})`);
  process.exit(1);
}

/** Redoc's "API docs by Redocly" logos, loaded from its CDN at run time; replaced by inline SVGs. */
const wordmark = (text, width) =>
  "data:image/svg+xml," +
  encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="16" viewBox="0 0 ${width} 16">` +
      `<text x="0" y="12" font-family="system-ui, sans-serif" font-size="12" font-weight="600" fill="#4f46e5">${text}</text></svg>`,
  );
const replacements = new Map([
  ["https://cdn.redoc.ly/redoc/logo-mini-full.svg", wordmark("Redoc", 40)],
  ["https://cdn.redoc.ly/redoc/logo-mini.svg", wordmark("R", 10)],
]);

let html = readFileSync(output, "utf8");
for (const [remote, inline] of replacements) {
  if (!html.includes(remote)) {
    console.error(`Redoc no longer references ${remote}: check where its footer logo comes from now.`);
    process.exit(1);
  }
  html = html.split(remote).join(inline);
}

// Anything the HTML itself loads (as opposed to links a reader may follow) must be local.
const remoteLoads = [
  ...html.matchAll(/<(?:script|img|iframe|source)\b[^>]*\bsrc=["']?(https?:)?\/\/[^"'\s>]+/gi),
  ...html.matchAll(/<link\b[^>]*\bhref=["']?(https?:)?\/\/[^"'\s>]+/gi),
  ...html.matchAll(/@import\s+(?:url\()?["']?https?:\/\/[^"')\s]+/gi),
  ...html.matchAll(/url\(["']?https?:\/\/[^"')\s]+/gi),
  ...html.matchAll(/https?:\/\/(?:cdn\.redoc\.ly|fonts\.(?:googleapis|gstatic)\.com)[^"'`\s]*/gi),
].map((match) => match[0]);
if (remoteLoads.length > 0) {
  console.error(`dist/index.html would load remote files:\n  ${remoteLoads.join("\n  ")}`);
  process.exit(1);
}

writeFileSync(output, html);
for (const file of ["openapi.yaml", "openapi.json"]) {
  copyFileSync(require.resolve(`@tenant-integration/openapi/${file}`), join(dirname(output), file));
}
console.log(`✔ ${relative(process.cwd(), output)}: offline, ${Math.round(Buffer.byteLength(html) / 1024)} KiB`);
