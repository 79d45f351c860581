/**
 * Test helpers: real file-system faults for fileStorage. A directory that becomes read-only, and a
 * disk that is full, made with a small tmpfs mounted on a fresh directory (root, as in CI). A
 * read-only directory without root is a chmod 0500 (root ignores modes, so it needs the mount).
 * Not part of the package (excluded from the build).
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, writeFile } from "node:fs/promises";

const isRoot = process.getuid?.() === 0;

function mount(...args: string[]): void {
  try {
    execFileSync("mount", args, { stdio: "pipe" });
  } catch (e) {
    throw new Error(`this test needs to mount a tmpfs (run as root, as CI does): mount ${args.join(" ")} failed: ${(e as Error).message}`);
  }
}

/** A directory of its own, a tmpfs of `sizeKiB` when running as root. */
export interface TestDisk {
  readonly dir: string;
  /** Makes the directory read-only (remount, or chmod 0500 without root). */
  readOnly(): Promise<void>;
  /** Makes it writable again. */
  writable(): Promise<void>;
  /** Fills the disk, leaving no room for another write. Needs root. */
  fill(): Promise<void>;
  /** Unmounts. */
  remove(): void;
}

export async function testDisk(dir: string, sizeKiB = 256): Promise<TestDisk> {
  await mkdir(dir, { recursive: true });
  if (isRoot) mount("-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", dir);
  return {
    dir,
    readOnly: async () => (isRoot ? mount("-o", "remount,ro", dir) : chmod(dir, 0o500)),
    writable: async () => (isRoot ? mount("-o", "remount,rw", dir) : chmod(dir, 0o700)),
    async fill() {
      if (!isRoot) throw new Error("this test needs root to mount a full tmpfs");
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
    remove() {
      if (isRoot) execFileSync("umount", [dir], { stdio: "pipe" });
    },
  };
}
