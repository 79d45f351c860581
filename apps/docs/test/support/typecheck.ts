// Compiles a guide's TypeScript snippet against the BUILT packages (as a reader's project would),
// under the repository's compiler options. Returns tsc's output, "" when clean.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const outDir = join(docsDir, "test-results", "quick-start");
const tsc = join(docsDir, "node_modules", ".bin", "tsc");

export function typecheck(name: string, source: string): string {
  rmSync(join(outDir, name), { recursive: true, force: true });
  mkdirSync(join(outDir, name), { recursive: true });
  writeFileSync(join(outDir, name, "snippet.ts"), source);
  writeFileSync(
    join(outDir, name, "tsconfig.json"),
    JSON.stringify({
      extends: "../../../../../tsconfig.base.json",
      compilerOptions: { noEmit: true, types: ["node"], lib: ["ES2022", "DOM", "DOM.Iterable"] },
      files: ["snippet.ts"],
    }),
  );
  try {
    execFileSync(tsc, ["-p", join(outDir, name, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" });
    return "";
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}
