/**
 * Regression guard: every ```ts sample of README.md type-checks against the package's own sources,
 * so a sample that stops compiling (a renamed option, a changed signature) fails `pnpm test`.
 *
 * The samples are compiled in memory as modules of this package, with the import specifiers mapped
 * to `src/`, under the package's tsconfig. The few names a sample uses without defining (the app's
 * own functions, and the `tm` of the first sample) are declared in {@link AMBIENT}.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const samples = [...readFileSync(`${root}README.md`, "utf8").matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");

/** What the samples call but leave to the app. */
const AMBIENT = `
declare const tm: import("@tenant-integration/token-manager").TokenManager;
declare function showSignInButton(): void;
declare function showOfflineBanner(): void;
`;

function typeCheck(sources: readonly string[]): string[] {
  // `export {}` makes every sample a module, as it would be in an app (top-level await, own scope).
  const files = new Map(sources.map((text, i) => [`${root}readme-sample-${i + 1}.ts`, `${text}\nexport {};\n`]));
  files.set(`${root}readme-ambient.d.ts`, AMBIENT);
  const config = ts.getParsedCommandLineOfConfigFile(`${root}tsconfig.json`, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error("tsconfig.json is unreadable");
  const options: ts.CompilerOptions = {
    ...config.options,
    rootDir: root,
    noEmit: true,
    baseUrl: root,
    paths: {
      "@tenant-integration/token-manager": ["./src/index.ts"],
      "@tenant-integration/token-manager/node": ["./src/node/index.ts"],
    },
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) => {
    const text = files.get(name);
    return text === undefined ? getSourceFile.call(host, name, language, ...rest) : ts.createSourceFile(name, text, language);
  };
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name);
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName.slice(root.length)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : "";
    return where + ts.flattenDiagnosticMessageText(d.messageText, "\n");
  });
}

describe("README.md", () => {
  it("has the TypeScript samples this test checks", () => {
    expect(samples.length).toBeGreaterThanOrEqual(4);
    expect(samples.join("")).toContain("createTokenManager(");
  });

  it("type-checks every TypeScript sample against the package's types", () => {
    expect(typeCheck(samples)).toEqual([]);
  }, 60_000);

  it("would catch a sample that no longer compiles", () => {
    const broken = samples.map((s) => s.replace("clientId:", "clientIdentifier:"));
    expect(typeCheck(broken).some((d) => d.includes("clientIdentifier"))).toBe(true);
  }, 60_000);
});
