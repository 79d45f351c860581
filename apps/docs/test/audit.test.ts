// Regression tests for the audit of issue 19 where the defect sat outside the contract's YAML (those
// are in spec/test/audit.test.ts): the READMEs' RFC citations and the kit's marked readings, and
// the guides' claims about the sandbox, checked against the sandbox itself.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSandbox } from "@tenant-integration/sandbox";
import { describe, expect, it } from "vitest";
import { contract } from "./support/contract.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const read = (path: string) => readFileSync(join(repoRoot, path), "utf8");
const squash = (text: string) => text.replace(/\s+/g, " ");
const paragraphs = (markdown: string) => markdown.split(/\n\s*\n/).map(squash);

describe("the token manager's README", () => {
  const readme = read("packages/token-manager/README.md");

  it("grounds the fixed loopback port in the description's exact match (§2, §7), not in RFC 8252 §7.3, which says the opposite", () => {
    const paragraph = paragraphs(readme).find((p) =>
      p.startsWith("Register a loopback redirect URI with a fixed port"),
    );
    expect(paragraph).toBeDefined();
    expect(paragraph).toMatch(
      /service description requires `redirect_uri` to match a registered URI exactly \(its §2 and §7\)/,
    );
    // §7.3 appears only as what a server would do that this service is not known to do.
    expect(paragraph).toMatch(
      /RFC 8252 §7\.3 would have a server accept any port on a loopback redirect; this service is not known to/,
    );
  });

  it("cites RFC 6749 §3.1 and §3.2 for baseUrl's https rule, not RFC 8252 §8.3 (about redirect URIs)", () => {
    const row = readme.split("\n").find((line) => line.startsWith("| `baseUrl` |"));
    expect(row).toMatch(/RFC 6749 §3\.1 and §3\.2/);
    expect(row).not.toMatch(/8252/);
  });
});

describe("the client's README", () => {
  it("marks its any-one-scope reading of the challenge's scope list as the kit's assumption", () => {
    const paragraph = paragraphs(read("packages/client/README.md")).find((p) =>
      p.startsWith("`requiredScope` is read as alternatives"),
    );
    expect(paragraph).toMatch(/That reading is an assumption of the kit/);
    expect(paragraph).toMatch(
      /the service description says neither what the challenge carries nor how its list is meant/,
    );
  });
});

describe('the guide "Errors in the client"', () => {
  it("names only options createTenantClient has (its README's options table; logLevel is gone), and the SyntaxError of a body that is not JSON", () => {
    const readme = read("packages/client/README.md");
    const options = [...readme.matchAll(/^\| `(\w+)`(?: \(required\))? \|/gm)].map((m) => m[1]);
    const guide = contract.info.description.split("\n## Errors in the client\n")[1]!.split("\n## ")[0]!;
    const row = guide.split("\n").find((line) => line.startsWith("| bad options"));
    const named = [...(row ?? "").split("|")[1]!.matchAll(/`(\w+)`/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(2);
    // Each is an option of the README's table, or the factory its value comes from (`retryPolicy(`).
    for (const name of named) expect(options.includes(name) || readme.includes(`\`${name}(`), name!).toBe(true);
    expect(named).not.toContain("logLevel");
    expect(guide).toMatch(/\| a 2xx body that is not the JSON it claims \| thrown [^|]*\| `SyntaxError` \|/);
  });
});

describe("the guides' claims about the sandbox, against the sandbox", () => {
  it("quote the no-token challenge the sandbox really sends", async () => {
    const sandbox = createSandbox();
    const response = await sandbox.fetch("http://127.0.0.1/api/v1/auth/user", {
      headers: { Accept: "application/json" },
    });
    expect(response.status).toBe(401);
    const challenge = response.headers.get("www-authenticate");
    const header = (
      contract as unknown as {
        components: { headers: Record<string, { examples: Record<string, { value: string }> }> };
      }
    ).components.headers;
    expect(header["InvalidTokenChallenge"]!.examples["noToken"]!.value).toBe(challenge);
    expect(contract.info.description).toContain(`\`${challenge}\``);
  });

  it("name only flags the sandbox's command has", () => {
    const cli = join(
      dirname(createRequire(import.meta.url).resolve("@tenant-integration/sandbox/package.json")),
      "dist",
      "cli.js",
    );
    const help = execFileSync(process.execPath, [cli, "--help"], { encoding: "utf8" });
    const texts = [
      contract.info.description,
      ...contract.tags.map((t) => t.description),
      read("README.md"),
      read("packages/token-manager/README.md"),
    ];
    const flags = new Set(
      texts.flatMap((text) => [...text.matchAll(/`(?:[^`]*\s)?(--[a-z][a-z-]+)[ `=]/g)].map((m) => m[1]!)),
    );
    const sandboxFlags = [...flags].filter((flag) =>
      /rotation|grace|auto-approve|test-clock|state-file|client|port|allowed-host/.test(flag),
    );
    expect(sandboxFlags).toContain("--rotation-grace");
    for (const flag of sandboxFlags) expect(help, flag).toMatch(new RegExp(`^\\s+${flag}\\b`, "m"));
  });
});
