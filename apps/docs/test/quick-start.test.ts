// The quick-start snippets of the guides are compiled against the built token manager and client,
// so a renamed export or option breaks `pnpm test` instead of a reader's first hour.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { codeBlocks, section } from "./support/contract.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(docsDir, "test-results", "quick-start");
const tsc = join(docsDir, "node_modules", ".bin", "tsc");

function typecheck(name: string, source: string): string {
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

describe("the quick start", () => {
  it.each([
    ["browser", "In the browser"],
    ["node", "In Node (a command-line tool)"],
  ])("compiles the %s snippet against the built packages", (name, heading) => {
    const guide = section("Quick start");
    const part = guide.slice(guide.indexOf(`### ${heading}`));
    const [snippet] = codeBlocks(part, "ts");
    expect(snippet).toContain("createTokenManager(");
    expect(snippet).toContain('client.GET("/api/v1/auth/user")');
    expect(typecheck(name, snippet!)).toBe("");
  });

  it("starts the sandbox with the clients the snippets use", () => {
    const [command] = codeBlocks(section("Quick start"), "sh");
    expect(command).toContain("tenant-sandbox --port 4020");
    expect(command).toContain("--client id=demo,redirect=http://localhost:5173/callback");
    expect(command).toContain("--client id=demo-cli,redirect=http://127.0.0.1:53682/callback");
  });
});
