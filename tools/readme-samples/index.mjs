// README samples as tests: the ```ts blocks of a README, compiled in memory as modules of the
// package (its tsconfig, its import specifiers mapped to its sources), so a sample that stops
// compiling fails the package's `pnpm test`.
import { readFileSync } from "node:fs";
import ts from "typescript";

/** The body of every block fenced exactly as ```ts, in document order. */
export function readmeSamples(readmePath) {
  return [...readFileSync(readmePath, "utf8").matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
}

/** Type-checks `samples` as modules of the package at `root`; the diagnostics, [] when clean. */
export function typeCheckSamples({ root, samples, paths, ambient = "" }) {
  const dir = root.endsWith("/") ? root : `${root}/`;
  // `export {}` makes every sample a module, as it would be in an app (top-level await, own scope).
  const files = new Map(samples.map((text, i) => [`${dir}readme-sample-${i + 1}.ts`, `${text}\nexport {};\n`]));
  files.set(`${dir}readme-ambient.d.ts`, ambient);
  const config = ts.getParsedCommandLineOfConfigFile(
    `${dir}tsconfig.json`,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error(`${dir}tsconfig.json is unreadable`);
  const options = { ...config.options, rootDir: dir, noEmit: true, baseUrl: dir, paths };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) => {
    const text = files.get(name);
    return text === undefined
      ? getSourceFile.call(host, name, language, ...rest)
      : ts.createSourceFile(name, text, language);
  };
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name);
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file
      ? `${d.file.fileName.slice(dir.length)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: `
      : "";
    return where + ts.flattenDiagnosticMessageText(d.messageText, "\n");
  });
}
