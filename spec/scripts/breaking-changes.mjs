// The breaking-change check of the contract.
//
// Baseline: the contract at the newest release tag `@tenant-integration/openapi@<version>`; where
// no release exists yet, the merge base of HEAD with the main branch, and on main itself the
// parent commit, so that every change to main is checked against what came before it. The working
// tree is compared, so uncommitted edits count.
//
// A breaking change passes only when a pending changeset bumps @tenant-integration/openapi major.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PACKAGE = "@tenant-integration/openapi";

function git(args, cwd) {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
}

function tryGit(args, cwd) {
  try {
    return git(args, cwd);
  } catch {
    return null;
  }
}

/** Picks the commit whose contract is the baseline, with a sentence saying why. */
export function findBaseline(specDir) {
  const tag = tryGit(["describe", "--tags", "--abbrev=0", "--match", `${PACKAGE}@*`], specDir);
  if (tag) return { rev: tag, why: `the last release, ${tag}` };
  const head = tryGit(["rev-parse", "HEAD"], specDir);
  if (!head) return null;
  for (const branch of ["origin/main", "main"]) {
    const base = tryGit(["merge-base", "HEAD", branch], specDir);
    if (base && base !== head) return { rev: base, why: `the merge base with ${branch} (no release yet)` };
  }
  const parent = tryGit(["rev-parse", "--verify", "--quiet", "HEAD^"], specDir);
  if (parent) return { rev: parent, why: "the parent commit on main (no release yet)" };
  return null;
}

/** True when a pending changeset bumps the contract package major. */
export function hasMajorChangeset(repoRoot) {
  const dir = join(repoRoot, ".changeset");
  if (!existsSync(dir)) return false;
  const pattern = new RegExp(`^["']?${PACKAGE.replace(/[/@]/g, "\\$&")}["']?\\s*:\\s*major\\s*$`, "m");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".md") && f !== "README.md")
    .some((f) => {
      const text = readFileSync(join(dir, f), "utf8");
      const front = text.match(/^---\n([\s\S]*?)\n---/);
      return front ? pattern.test(front[1]) : false;
    });
}

export async function checkBreakingChanges({ specDir }) {
  const repoRoot = tryGit(["rev-parse", "--show-toplevel"], specDir);
  const baseline = repoRoot ? findBaseline(specDir) : null;
  if (!baseline) return { ok: true, message: "No earlier contract to compare with (no release, no parent commit)." };

  const prefix = git(["rev-parse", "--show-prefix"], specDir); // "spec/"
  const hasSpec = tryGit(["cat-file", "-e", `${baseline.rev}:${prefix}openapi.yaml`], specDir) !== null;
  if (!hasSpec) return { ok: true, message: `No contract existed at ${baseline.why}; nothing to compare.` };

  const work = mkdtempSync(join(tmpdir(), "contract-baseline-"));
  try {
    // Extract the baseline's spec folder and bundle it with this checkout's Redocly.
    const archive = execFileSync("git", ["archive", "--format=tar", baseline.rev, prefix], {
      cwd: repoRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    execFileSync("tar", ["-x", "-C", work], { input: archive });
    const oldRoot = join(work, prefix);
    const redocly = join(specDir, "node_modules", ".bin", "redocly");
    const bundled = spawnSync(redocly, ["bundle", "openapi.yaml", "-o", join(work, "baseline.yaml")], {
      cwd: oldRoot,
      encoding: "utf8",
    });
    if (bundled.status !== 0)
      return { ok: false, message: `Could not bundle the baseline contract (${baseline.why}):\n${bundled.stderr}` };

    const optic = join(specDir, "node_modules", ".bin", "optic");
    const diff = spawnSync(
      optic,
      ["diff", join(work, "baseline.yaml"), join(specDir, "dist", "openapi.yaml"), "--check"],
      {
        cwd: specDir,
        encoding: "utf8",
        env: { ...process.env, OPTIC_TELEMETRY_DISABLED: "true", NO_COLOR: "1" },
      },
    );
    process.stdout.write(diff.stdout);
    process.stderr.write(diff.stderr);
    if (diff.status === 0) return { ok: true, message: `No breaking change against ${baseline.why}.` };
    if (hasMajorChangeset(repoRoot)) {
      return {
        ok: true,
        message: `Breaking changes against ${baseline.why}, accompanied by a major changeset for ${PACKAGE}.`,
      };
    }
    return {
      ok: false,
      message: `Breaking changes against ${baseline.why} (listed above). Undo them, or add a changeset that bumps ${PACKAGE} major (pnpm changeset).`,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
