// The lock directory of the token file on a disk that stops answering (issue 36: a network disk): a
// holder that lets its lock go while the disk does not answer cannot remove the directory, which
// names it, a live owner, that nobody else may take over; it removes it itself once the disk answers.
// The disk's outage is a symbolic link swapped, in one rename, for a link to a regular file: every
// access under it fails (ENOTDIR), as the conformance suite's `disk: unreachable` does.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withDirLock } from "./dir-lock.js";

/** `state`, a link to the directory `disk`, which `away()` makes unreachable and `back()` reachable again. */
async function networkDisk() {
  const root = await mkdtemp(join(tmpdir(), "dir-lock-"));
  const disk = join(root, "disk");
  const dead = join(root, "unreachable");
  const state = join(root, "state");
  await mkdir(disk);
  await writeFile(dead, "");
  const link = async (target: string) => {
    await symlink(target, `${state}.next`);
    await rename(`${state}.next`, state);
  };
  await link(disk);
  return {
    lockPath: join(state, "tokens.json.refresh.lock"),
    onDisk: join(disk, "tokens.json.refresh.lock"),
    away: () => link(dead),
    back: () => link(disk),
  };
}

const options = { staleMs: 2_000, timeoutMs: 3_000 };

describe("a lock let go while its disk does not answer", () => {
  it("is removed by its holder once the disk answers again, unasked, so the others can take it", async () => {
    const disk = await networkDisk();
    await withDirLock(disk.lockPath, options, async () => {
      await disk.away();
    });
    await disk.back();
    // Left behind, naming this live process: never taken over by another.
    expect(existsSync(disk.onDisk)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(disk.onDisk)).toBe(false);
  });

  it("is removed at once when its holder takes the same lock again, instead of waiting for itself", async () => {
    const disk = await networkDisk();
    await withDirLock(disk.lockPath, options, async () => {
      await disk.away();
    });
    await disk.back();
    // Before, it waited for itself, a live owner, and failed with LOCK_TIMEOUT.
    expect(await withDirLock(disk.lockPath, options, async () => "taken")).toBe("taken");
  });
});
