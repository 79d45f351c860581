#!/usr/bin/env node
// `pnpm start`: after `turbo run build`, serves what a newcomer wants to see and prints the URLs.
// Ctrl-C (or SIGTERM) stops every service it started.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const requireFromSpec = createRequire(join(root, "spec", "package.json"));
const prismPort = Number(process.env.PRISM_PORT ?? 4010);

const services = [
  {
    name: "Prism mock of the contract",
    command: process.execPath,
    args: [
      join(dirname(requireFromSpec.resolve("@stoplight/prism-cli/package.json")), "dist", "index.js"),
      "mock",
      join(root, "spec", "dist", "openapi.yaml"),
      "-p",
      String(prismPort),
      "-h",
      "127.0.0.1",
    ],
    ready: /listening on/i,
    url: `http://127.0.0.1:${prismPort}`,
  },
];

const children = [];
let stopping = false;
function stopAll(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
  setTimeout(() => process.exit(code), 300).unref();
}
process.on("SIGINT", () => stopAll(0));
process.on("SIGTERM", () => stopAll(0));

for (const service of services) {
  const child = spawn(service.command, service.args, { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let printed = false;
  const onOutput = (chunk) => {
    if (!printed && service.ready.test(String(chunk))) {
      printed = true;
      console.log(`✔ ${service.name}: ${service.url}`);
    }
  };
  child.stdout.on("data", onOutput);
  child.stderr.on("data", (chunk) => process.stderr.write(`[${service.name}] ${chunk}`));
  child.on("exit", (code) => {
    if (!stopping) {
      console.error(`✖ ${service.name} exited (${code}); stopping.`);
      stopAll(1);
    }
  });
}
console.log("Starting… press Ctrl-C to stop.");
