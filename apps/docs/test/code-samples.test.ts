// The reference shows, on every operation, how the kit calls it in TypeScript, in Python, in Go and in
// Java (x-codeSamples, from samples/<operationId>.ts|.py|.go|.java by scripts/code-samples.mjs). This file
// checks the TypeScript samples compile against the built packages, that the build refuses a missing
// or stray sample, and, in the system Chromium, that each operation's panel offers the languages and
// shows each sample's code. The Python samples are type-checked by mypy --strict against the
// package's sources in packages/python/tests/test_docs_samples.py; the Go ones are built against
// packages/go in test/go-samples.test.ts; the Java ones are compiled against packages/java's jars and
// run in test/samples-run.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, type Browser, type Page } from "@tenant-integration/browser-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module of the build, without type declarations
import { SAMPLE_LANGUAGES, samplesDir, withCodeSamples } from "../scripts/code-samples.mjs";
import { contract } from "./support/contract.js";
import { serveStatic, type StaticServer } from "./support/static-server.js";
import { typecheckSnippet } from "./support/typecheck.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");

interface CodeSample {
  lang: string;
  label: string;
  source: string;
}
interface Operation {
  operationId: string;
  path: string;
  tags: string[];
  "x-codeSamples"?: CodeSample[];
}

/** Every operation of the contract with its tag, in the contract's order. */
const operations: Operation[] = Object.entries(contract.paths).flatMap(([path, item]) =>
  Object.values(item).map((operation) => ({ ...(operation as unknown as Omit<Operation, "path">), path })),
);
const sample = (operationId: string, extension: string): string =>
  readFileSync(join(samplesDir, `${operationId}.${extension}`), "utf8").trimEnd();

describe("the code samples of the reference", () => {
  it("are injected as x-codeSamples on every operation, TypeScript, Python, Go, Java then curl, from samples/", () => {
    const prepared = withCodeSamples(contract) as { paths: Record<string, Record<string, Operation>> };
    const injected = Object.values(prepared.paths).flatMap((item) => Object.values(item));
    expect(injected.map(({ operationId }) => operationId)).toEqual(operations.map(({ operationId }) => operationId));
    expect(injected).toHaveLength(operations.length);
    for (const operation of injected) {
      expect(operation["x-codeSamples"]).toEqual([
        { lang: "TypeScript", label: "TypeScript", source: sample(operation.operationId, "ts") },
        { lang: "Python", label: "Python", source: sample(operation.operationId, "py") },
        { lang: "Go", label: "Go", source: sample(operation.operationId, "go") },
        { lang: "Java", label: "Java", source: sample(operation.operationId, "java") },
        { lang: "curl", label: "curl", source: sample(operation.operationId, "sh") },
      ]);
    }
    expect(SAMPLE_LANGUAGES.map(({ lang }: { lang: string }) => lang)).toEqual([
      "TypeScript",
      "Python",
      "Go",
      "Java",
      "curl",
    ]);
  });

  it("refuses to build without a sample for some operation, or with a sample of no operation", () => {
    const dir = mkdtempSync(join(tmpdir(), "code-samples-"));
    try {
      cpSync(samplesDir, dir, { recursive: true });
      rmSync(join(dir, "revokeToken.py"));
      writeFileSync(join(dir, "deleteEverything.ts"), "export {};\n");
      expect(() => withCodeSamples(contract, dir)).toThrow(
        /samples\/revokeToken\.py is missing[\s\S]*samples\/deleteEverything\.ts names no operation/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(operations.map(({ operationId }) => [operationId]))(
    "%s: the TypeScript sample compiles against the built packages",
    (operationId) => {
      expect(typecheckSnippet("code-samples", operationId, sample(operationId, "ts"))).toBe("");
    },
  );

  it("a TypeScript sample that stops compiling is caught", () => {
    const broken = sample("getAuthenticatedUser", "ts").replace("auth: tm", "authStrategy: tm");
    expect(typecheckSnippet("code-samples", "broken", broken)).toContain("authStrategy");
  });
});

describe("the built reference, in Chromium", () => {
  let server: StaticServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await serveStatic(join(docsDir, "dist"));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The lines of a sample, each with its spaces collapsed, as the panel's text must hold them. */
  const lines = (source: string): string[] =>
    source
      .split("\n")
      .map((line) => line.replace(/\s+/g, " ").trim())
      .filter((line) => line !== "");
  const panelText = async (panel: ReturnType<Page["locator"]>): Promise<string> =>
    (await panel.innerText()).replace(/\s+/g, " ");

  it.each(operations.map((operation) => [operation.operationId, operation] as const))(
    "%s shows its TypeScript sample first, and its Python, Go and Java samples from the language menu",
    async (operationId, operation) => {
      // A page of its own: Redoc remembers the language chosen on another operation.
      const page: Page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      try {
        await page.goto(`${server.url}#/${operation.tags[0]!.toLowerCase()}/${operationId.toLowerCase()}`);
        // This operation's request panel: the one headed by its path that shows its TypeScript sample.
        const [firstTs] = lines(sample(operationId, "ts")).filter((line) => !line.startsWith("//"));
        const panel = page
          .locator("div")
          .filter({ has: page.getByText(operation.path, { exact: true }) })
          .filter({ has: page.getByText("TypeScript", { exact: true }) })
          .filter({ hasText: firstTs! })
          .last();
        await expect.poll(() => panel.isVisible()).toBe(true);
        const typescript = await panelText(panel);
        for (const line of lines(sample(operationId, "ts"))) expect(typescript).toContain(line);
        // Its language menu: choose Python; the same panel then shows the Python sample.
        await panel.getByText("TypeScript", { exact: true }).click();
        await page.getByText("Python", { exact: true }).filter({ visible: true }).first().click();
        const pythonPanel = page
          .locator("div")
          .filter({ has: page.getByText(operation.path, { exact: true }) })
          .filter({ has: page.getByText("Python", { exact: true }) })
          .filter({ hasText: lines(sample(operationId, "py")).at(-1)! })
          .last();
        await expect.poll(() => pythonPanel.isVisible()).toBe(true);
        const python = await panelText(pythonPanel);
        for (const line of lines(sample(operationId, "py"))) expect(python).toContain(line);
        // The same menu, now under "Python": choose Go.
        await pythonPanel.getByText("Python", { exact: true }).click();
        await page.getByText("Go", { exact: true }).filter({ visible: true }).first().click();
        const goPanel = page
          .locator("div")
          .filter({ has: page.getByText(operation.path, { exact: true }) })
          .filter({ has: page.getByText("Go", { exact: true }) })
          // Its last line that is more than closing braces.
          .filter({
            hasText: lines(sample(operationId, "go"))
              .filter((line) => /\w/.test(line))
              .at(-1)!,
          })
          .last();
        await expect.poll(() => goPanel.isVisible()).toBe(true);
        const go = await panelText(goPanel);
        for (const line of lines(sample(operationId, "go"))) expect(go).toContain(line);
        // The same menu, now under "Go": choose Java.
        await goPanel.getByText("Go", { exact: true }).click();
        await page.getByText("Java", { exact: true }).filter({ visible: true }).first().click();
        const javaPanel = page
          .locator("div")
          .filter({ has: page.getByText(operation.path, { exact: true }) })
          .filter({ has: page.getByText("Java", { exact: true }) })
          .filter({
            hasText: lines(sample(operationId, "java"))
              .filter((line) => /\w/.test(line))
              .at(-1)!,
          })
          .last();
        await expect.poll(() => javaPanel.isVisible()).toBe(true);
        const java = await panelText(javaPanel);
        for (const line of lines(sample(operationId, "java"))) expect(java).toContain(line);
      } finally {
        await page.close();
      }
    },
  );
});
