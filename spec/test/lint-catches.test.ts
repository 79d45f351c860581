// Planted contract errors must fail `pnpm lint` (its first step, Redocly lint) with a message that
// names them. Each case edits a copy of the contract in a temporary folder.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const specDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const redocly = join(specDir, "node_modules", ".bin", "redocly");
let copies: string[] = [];
afterEach(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  copies = [];
});

function lintWith(file: string, edit: (text: string) => string) {
  const dir = mkdtempSync(join(tmpdir(), "planted-"));
  copies.push(dir);
  for (const entry of ["openapi.yaml", "redocly.yaml", "paths", "components"])
    cpSync(join(specDir, entry), join(dir, entry), { recursive: true });
  const target = join(dir, file);
  const before = readFileSync(target, "utf8");
  const after = edit(before);
  expect(after, "the planted edit changed nothing").not.toBe(before);
  writeFileSync(target, after);
  const run = spawnSync(redocly, ["lint", "openapi.yaml", "--format=stylish"], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

describe("pnpm lint catches a planted contract error", () => {
  it("passes the contract as it is", () => {
    expect(lintWith("openapi.yaml", (t) => `${t}\n`).status).toBe(0);
  });

  it("names an example of the wrong type", () => {
    const { status, output } = lintWith("components/examples/TokenIssued.yaml", (t) =>
      t.replace("expires_in: 900", 'expires_in: "soon"'),
    );
    expect(status).not.toBe(0);
    expect(output).toMatch(/expires_in.*must be integer/);
  });

  it("names an undefined scope", () => {
    const { status, output } = lintWith("paths/api_v1_auth_user.yaml", (t) =>
      t.replace("- profile:read", "- profile:write"),
    );
    expect(status).not.toBe(0);
    expect(output).toMatch(/profile:write.*not defined/);
  });

  it("names a required field that was removed from the schema", () => {
    const { status, output } = lintWith("components/schemas/AuthorizationCodeGrantRequest.yaml", (t) =>
      t.replace(/\n  code_verifier:\n    \$ref: CodeVerifier.yaml\n/, "\n"),
    );
    expect(status).not.toBe(0);
    expect(output).toMatch(/code_verifier/);
  });
});
