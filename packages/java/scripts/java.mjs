// What the Java package's scripts share: the JDK to run, Maven through the committed wrapper, and
// the rule for a machine without a JDK (left out with a warning outside CI; an error in CI).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The java launcher: $JAVA_HOME/bin/java, else `java` on the PATH; undefined when there is none. */
export function javaCommand() {
  const home = process.env.JAVA_HOME;
  if (home && existsSync(join(home, "bin", "java"))) return join(home, "bin", "java");
  const found = spawnSync("java", ["-version"], { stdio: "ignore" });
  return found.error || found.status !== 0 ? undefined : "java";
}

/** Exits when there is no JDK: 0 with a warning outside CI, 1 in CI (where every target must be present). */
export function requireJava(task) {
  if (javaCommand()) return;
  const why = "no JDK (apt-get install -y openjdk-17-jdk-headless, or set JAVA_HOME)";
  if (process.env.CI === "true") {
    console.error(`java ${task}: ${why}`);
    process.exit(1);
  }
  console.warn(`java ${task}: left out: ${why}`);
  process.exit(0);
}

/** The package's version (package.json's, which changesets bumps): the Maven reactor's `${revision}`. */
export function version() {
  return JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
}

/** Runs the Maven wrapper in packages/java at package.json's version; exits with its status when it fails. */
export function mvn(args, { exit = true } = {}) {
  const result = spawnSync(join(root, "mvnw"), ["-B", "--no-transfer-progress", `-Drevision=${version()}`, ...args], {
    cwd: root,
    stdio: "inherit",
  });
  if (exit && (result.error || result.status !== 0)) {
    console.error(`java: ./mvnw ${args.join(" ")} failed`);
    process.exit(result.status || 1);
  }
  return result.status ?? 1;
}

/** Runs the generator (built by the generator module) with `args`. */
export function generator(args) {
  const classes = join(root, "generator", "target", "classes");
  const classpathFile = join(root, "generator", "target", "classpath.txt");
  if (!existsSync(classes) || !existsSync(classpathFile)) mvn(["-q", "-pl", "generator", "package", "-DskipTests"]);
  const classpath = `${classes}:${readFileSync(classpathFile, "utf8").trim()}`;
  const result = spawnSync(
    javaCommand(),
    ["-cp", classpath, "io.github.tenantintegration.generator.Generate", "--repo", join(root, "..", ".."), ...args],
    { stdio: "inherit" },
  );
  return result.status ?? 1;
}
