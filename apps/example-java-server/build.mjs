// pnpm build for the example Java server: a Maven project of its own (pom.xml), as an integrator's
// would be, built against the kit as packages/java built it, never against an older copy in ~/.m2.
//
// Maven resolves a dependency from a repository, and the kit is published nowhere yet; so this script
// lays the kit's jars (built by packages/java's `pnpm build`, which turbo runs first) and its POMs
// into target/kit-repository, which Maven uses as its local repository, with ~/.m2/repository as a
// read-only tail (Maven 3.9's maven.repo.local.tail) for the plugins the kit's build already
// fetched. Then it writes target/command.json: the java that runs the app (run in
// this directory), for the test and `pnpm start`.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { javaCommand, mvn, requireJava, root as kitRoot, version } from "@tenant-integration/java/scripts/java.mjs";

const appDir = dirname(fileURLToPath(import.meta.url));
const target = join(appDir, "target");
const repository = join(target, "kit-repository");
const groupDir = join(repository, "io", "github", "tenant-integration");

requireJava("example-java-server build");
const kitVersion = version();

/** Puts one kit artifact (its POM, and its jar unless it is the parent) into the repository. */
function lay(artifactId, pom, jar) {
  const dir = join(groupDir, artifactId, kitVersion);
  mkdirSync(dir, { recursive: true });
  // The reactor's POMs name their version ${revision}: the version scripts/java.mjs passes.
  writeFileSync(
    join(dir, `${artifactId}-${kitVersion}.pom`),
    readFileSync(pom, "utf8").replaceAll(`$\{revision}`, kitVersion),
  );
  if (!jar) return;
  if (!existsSync(jar)) {
    console.error(`example-java-server build: ${jar} is missing: run \`pnpm build\` (packages/java first)`);
    process.exit(1);
  }
  copyFileSync(jar, join(dir, `${artifactId}-${kitVersion}.jar`));
}

// `--lint` (pnpm lint): the layout is palantir-java-format's, as the kit's; `format` applies it.
// Neither needs the kit, so the repository (which the app's test may be running from) is left alone.
if (process.argv.includes("--lint") || process.argv.includes("format")) {
  maven([process.argv.includes("--lint") ? "spotless:check" : "spotless:apply"]);
  process.exit(0);
}

rmSync(repository, { recursive: true, force: true });
lay("tenant-integration-parent", join(kitRoot, "pom.xml"));
for (const module of ["api", "token-manager"]) {
  const artifactId = `tenant-integration-${module}`;
  lay(artifactId, join(kitRoot, module, "pom.xml"), join(kitRoot, module, "target", `${artifactId}-${kitVersion}.jar`));
}

/** Runs Maven on the app's pom.xml, the kit resolved from the repository laid above. */
function maven(goals) {
  mvn([
    "-q",
    "-f",
    join(appDir, "pom.xml"),
    `-Dmaven.repo.local=${repository}`,
    `-Dmaven.repo.local.tail=${join(homedir(), ".m2", "repository")}`,
    `-Dtenant-integration.version=${kitVersion}`,
    ...goals,
  ]);
}

maven(["package"]);

// Relative to the app's directory, where the command runs: a build turbo restores from its cache
// into another checkout still runs.
const jars = [
  join(target, "example-java-server.jar"),
  ...readFileSync(join(target, "classpath.txt"), "utf8").trim().split(":"),
];
const classpath = jars.map((jar) => relative(appDir, jar)).join(":");
const command = [javaCommand(), "-cp", classpath, "io.github.tenantintegration.examples.server.ExampleServer"];
writeFileSync(join(target, "command.json"), `${JSON.stringify(command)}\n`);
console.log(`example-java-server build: ${join(target, "command.json")}`);
