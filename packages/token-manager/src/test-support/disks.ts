/**
 * Test helpers: real file-system faults for fileStorage, on a small tmpfs mounted on a fresh
 * directory: a directory that becomes read-only (EROFS), and a disk that is full (ENOSPC). Mounting
 * needs root, as CI runs (`.ci/run`); root also ignores file modes, so a chmod could not fake these.
 * Not part of the package (excluded from the build).
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";

function mount(...args: string[]): void {
  try {
    execFileSync("mount", args, { stdio: "pipe" });
  } catch (e) {
    throw new Error(
      `this test mounts a tmpfs and needs root (as CI runs): mount ${args.join(" ")} failed: ${(e as Error).message}`,
    );
  }
}

/** A tmpfs of its own. */
export interface TestDisk {
  readonly dir: string;
  /** Remounts it read-only. */
  readOnly(): void;
  /** Remounts it writable. */
  writable(): void;
  /** Fills it, leaving no page for another write. */
  fill(): Promise<void>;
  /** Unmounts it. */
  remove(): void;
}

export async function testDisk(dir: string, sizeKiB = 256): Promise<TestDisk> {
  await mkdir(dir, { recursive: true });
  mount("-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", dir);
  return {
    dir,
    readOnly: () => mount("-o", "remount,ro", dir),
    writable: () => mount("-o", "remount,rw", dir),
    async fill() {
      // Write until the disk refuses (ENOSPC), in big pieces and then in pages, so no page is left.
      let i = 0;
      for (const size of [64 * 1024, 4 * 1024]) {
        for (;;) {
          try {
            await writeFile(`${dir}/filler-${i++}`, Buffer.alloc(size));
          } catch (e) {
            if ((e as { code?: string }).code !== "ENOSPC") throw e;
            break;
          }
        }
      }
    },
    remove: () => execFileSync("umount", [dir], { stdio: "pipe" }),
  };
}
