// Every published package carries what `npm publish --provenance` and its users need. The list is
// the workspace itself (pnpm ls), so a package added later (packages/token-store-redis) is checked
// without editing this file.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { publishedPackages, publishProblems, root, type Manifest } from "../published.mjs";

const published = publishedPackages();

describe("the published packages", () => {
  it("are every non-private workspace package, the five of the kit among them", () => {
    expect(published.map(({ manifest }) => manifest.name)).toEqual(
      expect.arrayContaining([
        "@tenant-integration/openapi",
        "@tenant-integration/types",
        "@tenant-integration/token-manager",
        "@tenant-integration/client",
        "@tenant-integration/sandbox",
      ]),
    );
    expect(published.map(({ dir }) => dir)).not.toContain("tools/packaging");
  });

  it("are devDependencies of this package, so turbo builds each before its tarball is packed and checked", () => {
    const own = JSON.parse(readFileSync(join(root, "tools", "packaging", "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    const missing = published
      .map(({ manifest }) => manifest.name)
      .filter((name) => own.devDependencies[name] !== "workspace:*");
    expect(missing, "add them to tools/packaging/package.json as workspace:*").toEqual([]);
  });

  it("has an MIT LICENSE at the root of the repository", () => {
    expect(readFileSync(join(root, "LICENSE"), "utf8")).toMatch(/^MIT License\n/);
  });
});

describe.each(published.map(({ dir, manifest }) => [manifest.name, dir, manifest] as const))(
  "%s",
  (_name, dir, manifest) => {
    it("names its repository, directory, homepage and issue tracker, ships LICENSE and CHANGELOG.md, publishes with provenance", () => {
      expect(publishProblems(dir, manifest)).toEqual([]);
    });
  },
);

describe("publishProblems", () => {
  const good = published.find(({ dir }) => dir === "packages/client")!;
  const without = (change: (m: Manifest) => void): string[] => {
    const copy = structuredClone(good.manifest);
    change(copy);
    return publishProblems(good.dir, copy);
  };

  it('reports the manifest npm provenance rejects with E422 ("repository.url" is "")', () => {
    expect(without((m) => delete m.repository)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^repository\.url must be/)]),
    );
  });

  it("reports a repository directory that is not the package's folder", () => {
    expect(without((m) => (m.repository = { ...m.repository, directory: "packages" }))).toEqual([
      'repository.directory must be "packages/client"',
    ]);
  });

  it("reports a files list that leaves out LICENSE or CHANGELOG.md", () => {
    expect(without((m) => (m.files = m.files!.filter((f) => f !== "LICENSE" && f !== "CHANGELOG.md")))).toEqual([
      "files must list LICENSE",
      "files must list CHANGELOG.md",
    ]);
  });

  it("reports a missing homepage and bugs", () => {
    expect(
      without((m) => {
        delete m.homepage;
        delete m.bugs;
      }),
    ).toEqual([expect.stringMatching(/^homepage must be "/), expect.stringMatching(/^bugs must be "/)]);
  });

  it("reports a package folder without a LICENSE copy", () => {
    expect(
      publishProblems("tools/packaging", {
        ...good.manifest,
        repository: { ...good.manifest.repository, directory: "tools/packaging" },
        homepage: "https://github.com/tenant-integration/sdk/tree/main/tools/packaging#readme",
      }),
    ).toEqual(["tools/packaging/LICENSE must be a copy of the root LICENSE"]);
  });
});
