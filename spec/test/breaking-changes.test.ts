// The breaking-change step of `pnpm lint`, run in a throw-away git repository holding a copy of the
// contract: a change that breaks clients fails unless a major changeset accompanies it.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { checkBreakingChanges, hasMajorChangeset } from "../scripts/breaking-changes.mjs";

const specDir = join(dirname(fileURLToPath(import.meta.url)), "..");
let repo: string;
let spec: string;
const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" });
const bundle = () =>
  execFileSync(
    join(specDir, "node_modules", ".bin", "redocly"),
    ["bundle", "openapi.yaml", "-o", "dist/openapi.yaml"],
    { cwd: spec, stdio: "pipe" },
  );

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "breaking-"));
  spec = join(repo, "spec");
  mkdirSync(spec);
  for (const entry of ["openapi.yaml", "redocly.yaml", "paths", "components"])
    cpSync(join(specDir, entry), join(spec, entry), { recursive: true });
  symlinkSync(join(specDir, "node_modules"), join(spec, "node_modules"));
  writeFileSync(join(repo, ".gitignore"), "dist/\nnode_modules\n");
  git("init", "-q", "-b", "main");
  git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "baseline");
  // A second commit, so that main has a parent to compare with.
  writeFileSync(join(repo, "NOTES"), "x");
  git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "notes");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("the breaking-change check", () => {
  it("passes an unchanged contract", async () => {
    bundle();
    const outcome = await checkBreakingChanges({ specDir: spec });
    expect(outcome).toMatchObject({ ok: true });
    expect(outcome.message).toMatch(/No breaking change against the parent commit/);
  }, 60_000);

  it("fails when a response field clients rely on is removed, and passes with a major changeset", async () => {
    const file = join(spec, "components", "schemas", "TokenResponse.yaml");
    writeFileSync(
      file,
      readFileSync(file, "utf8")
        .replace("  expires_in:\n    $ref: ExpiresIn.yaml\n", "")
        .replace("  - expires_in\n", ""),
    );
    bundle();
    const broken = await checkBreakingChanges({ specDir: spec });
    expect(broken.ok).toBe(false);
    expect(broken.message).toMatch(/Breaking changes against the parent commit/);

    mkdirSync(join(repo, ".changeset"), { recursive: true });
    writeFileSync(
      join(repo, ".changeset", "drop.md"),
      '---\n"@tenant-integration/openapi": major\n---\n\nDrop expires_in.\n',
    );
    expect(hasMajorChangeset(repo)).toBe(true);
    const accepted = await checkBreakingChanges({ specDir: spec });
    expect(accepted).toMatchObject({ ok: true });
    expect(accepted.message).toMatch(/major changeset/);
  }, 60_000);

  it("does not take a minor changeset for a major one", () => {
    writeFileSync(
      join(repo, ".changeset", "drop.md"),
      '---\n"@tenant-integration/openapi": minor\n---\n\nDrop expires_in.\n',
    );
    expect(hasMajorChangeset(repo)).toBe(false);
  });
});
