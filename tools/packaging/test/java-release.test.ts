// The release workflow deploys the Java SDK to Maven Central only on the push that changed its version
// (tools/release/java-release.mjs, run by the `java-version` job of .github/workflows/release.yml),
// never at 0.0.0, and never a version Central has already. Checked on a scratch git repository with the
// same file layout (a reactor of a parent POM, a published module and one that skips the deploy), and
// with a stand-in for Central's maven-metadata.xml.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkCentral, coordinates, javaRelease } from "../../release/java-release.mjs";

const repo = mkdtempSync(join(tmpdir(), "java-release-"));
const git = (...args: string[]): string =>
  execFileSync(
    "git",
    ["-c", "user.name=test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false", ...args],
    { cwd: repo, encoding: "utf8" },
  ).trim();

const module = (artifactId: string, skip = false): string =>
  `<project>\n  <parent>\n    <groupId>io.github.tenant-integration</groupId>\n    <artifactId>tenant-integration-parent</artifactId>\n    <version>\${revision}</version>\n  </parent>\n  <artifactId>${artifactId}</artifactId>\n${skip ? "  <properties>\n    <maven.deploy.skip>true</maven.deploy.skip>\n  </properties>\n" : ""}</project>\n`;

/** Commits packages/java/package.json at `version` (and `other` beside it); returns the commit. */
function commit(version: string, other = ""): string {
  writeFileSync(
    join(repo, "packages", "java", "package.json"),
    JSON.stringify({ name: "@tenant-integration/java", version, private: true }, null, 2),
  );
  writeFileSync(join(repo, "other.txt"), other);
  git("add", "-A");
  git("commit", "-q", "--allow-empty", "-m", `java ${version} ${other}`);
  return git("rev-parse", "HEAD");
}

const java = join(repo, "packages", "java");
for (const dir of ["token-manager", "generator"]) mkdirSync(join(java, dir), { recursive: true });
writeFileSync(
  join(java, "pom.xml"),
  "<project>\n  <groupId>io.github.tenant-integration</groupId>\n  <artifactId>tenant-integration-parent</artifactId>\n  <version>${revision}</version>\n  <modules>\n    <module>generator</module>\n    <module>token-manager</module>\n  </modules>\n</project>\n",
);
writeFileSync(join(java, "token-manager", "pom.xml"), module("tenant-integration-token-manager"));
writeFileSync(join(java, "generator", "pom.xml"), module("tenant-integration-generator", true));
git("init", "-q");
const first = commit("0.0.0");
const unrelated = commit("0.0.0", "a change elsewhere");
const versioned = commit("0.1.0");

afterAll(() => rmSync(repo, { recursive: true, force: true }));

/** Maven Central as `fetch` sees it: the versions it holds of each artifact (404 for none). */
const central =
  (held: Record<string, string[]>) =>
  async (url: string | URL | Request): Promise<Response> => {
    const artifact = /\/([^/]+)\/maven-metadata\.xml$/.exec(String(url))?.[1] ?? "";
    const versions = held[artifact];
    if (!versions) return new Response("", { status: 404 });
    const listed = versions.map((version) => `<version>${version}</version>`).join("");
    return new Response(`<metadata><versioning><versions>${listed}</versions></versioning></metadata>`);
  };

describe("java-release.mjs: does this push release the Java SDK, and as what?", () => {
  it("names the coordinates: the groupId, the parent POM and each module that does not skip the deploy", () => {
    expect(coordinates(repo)).toEqual({
      group: "io.github.tenant-integration",
      artifacts: ["tenant-integration-parent", "tenant-integration-token-manager"],
    });
  });

  it("says yes when the push moved packages/java/package.json's version (a Version packages merge)", () => {
    expect(javaRelease({ cwd: repo, before: unrelated })).toMatchObject({
      version: "0.1.0",
      previous: "0.0.0",
      changed: true,
      why: "from 0.0.0",
    });
  });

  it("says no when the push left the version as it was", () => {
    git("checkout", "-q", versioned);
    expect(javaRelease({ cwd: repo, before: versioned })).toMatchObject({ changed: false });
  });

  it("never releases 0.0.0, even when the commit before the push cannot be read", () => {
    git("checkout", "-q", unrelated);
    for (const before of [first, "0000000000000000000000000000000000000000", undefined]) {
      const release = javaRelease({ cwd: repo, before });
      expect(release.changed).toBe(false);
      expect(release.why).toMatch(/0\.0\.0 is the version of an unreleased package/);
    }
    git("checkout", "-q", versioned);
    expect(javaRelease({ cwd: repo, before: "0000000000000000000000000000000000000000" }).changed).toBe(true);
  });

  it("refuses a version Maven Central has for any artifact, and takes one it has not", async () => {
    const release = javaRelease({ cwd: repo, previous: "0.0.0" });
    const held = { "tenant-integration-token-manager": ["0.1.0"] };
    await expect(checkCentral(release, central(held) as typeof fetch)).rejects.toThrow(
      "Maven Central has io.github.tenant-integration:tenant-integration-token-manager:0.1.0 already",
    );
    await expect(checkCentral(release, central({}) as typeof fetch)).resolves.toBeUndefined();
    const older = { "tenant-integration-parent": ["0.0.9"], "tenant-integration-token-manager": ["0.0.9"] };
    await expect(checkCentral(release, central(older) as typeof fetch)).resolves.toBeUndefined();
  });

  it("prints the lines the workflow appends to $GITHUB_OUTPUT", () => {
    const script = join(import.meta.dirname, "..", "..", "release", "java-release.mjs");
    const out = execFileSync("node", [script, unrelated], {
      cwd: repo,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    expect(out).toBe("changed=true\nversion=0.1.0\ngroup=io.github.tenant-integration\n");
  });
});

describe("what the Java reactor publishes (packages/java, as it is)", () => {
  const root = join(import.meta.dirname, "..", "..", "..");
  const javaDir = join(root, "packages", "java");
  const poms = readdirSync(javaDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(javaDir, entry.name, "pom.xml")))
    .map((entry) => ({ module: entry.name, pom: readFileSync(join(javaDir, entry.name, "pom.xml"), "utf8") }));

  it("is the parent POM and the modules users depend on, never the generator or the conformance actor", () => {
    expect(coordinates(root).artifacts.sort()).toEqual(
      [
        "tenant-integration-parent",
        "tenant-integration-api",
        "tenant-integration-token-manager",
        "tenant-integration-testing",
        "tenant-integration-redis",
        "tenant-integration-postgres",
        "tenant-integration-okhttp",
        "tenant-integration-spring",
      ].sort(),
    );
  });

  it("holds no test classes: no module builds a test-jar (mvn deploy publishes every attached artifact)", () => {
    const testJars = poms.filter(({ pom }) => /<goal>test-jar<\/goal>|<type>test-jar<\/type>/.test(pom));
    expect(testJars.map(({ module }) => module)).toEqual([]);
  });
});
