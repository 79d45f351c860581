// What a README in a tarball points at: the targets of its relative Markdown links, and the package
// files it names in code spans (`scripts/`, `src/leak.test.ts`). Fenced code blocks are the user's
// own code and commands, so they are left out.

/** Markdown link and image targets that are neither absolute URLs nor in-page anchors, without their #fragment. */
export function relativeLinks(markdown: string): string[] {
  const prose = withoutFences(markdown);
  const targets = [
    ...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g),
    ...prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm),
  ].map((m) => m[1]!);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith("#")).map((t) => t.split("#")[0]!);
}

/**
 * Code spans that read as paths inside the package: relative, no spaces, and starting with the
 * name of something in `packageFolder` (the package's folder in the repository, listed by the
 * caller). `node_modules/<pkg>/x` counts as `x` of the package itself.
 */
export function namedFiles(markdown: string, packageName: string, packageFolder: readonly string[]): string[] {
  const spans = [...withoutFences(markdown).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
  const inFolder = new Set(packageFolder.filter((name) => name !== "node_modules"));
  return spans
    .map((span) => span.replace(`node_modules/${packageName}/`, "").replace(/^\.\//, ""))
    .filter((span) => /^[\w@.-]+(\/[\w@.*{},-]*)*$/.test(span) && inFolder.has(span.split("/")[0]!));
}

/** Lines a user cannot run: the repository's own pnpm scripts (`pnpm test`, `pnpm --filter …`). */
export function contributorCommands(markdown: string): string[] {
  return markdown
    .split("\n")
    .filter((line) => /\bpnpm (run )?(build|test|typecheck|lint|bench|bundle|generate|--filter)\b/.test(line));
}

function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}
