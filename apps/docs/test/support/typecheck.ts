// Compiles a guide's TypeScript snippet against the built packages, as a reader's project would.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const tsc = join(docsDir, "node_modules", ".bin", "tsc");

/** Type-checks `source` as `test-results/<group>/<name>/snippet.ts`; returns tsc's output, "" when it compiles. */
export function typecheckSnippet(group: string, name: string, source: string): string {
  const dir = join(docsDir, "test-results", group, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "snippet.ts"), source);
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      extends: relative(dir, join(docsDir, "..", "..", "tsconfig.base.json")),
      compilerOptions: { noEmit: true, types: ["node"], lib: ["ES2022", "DOM", "DOM.Iterable"] },
      files: ["snippet.ts"],
    }),
  );
  try {
    execFileSync(tsc, ["-p", join(dir, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" });
    return "";
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}
