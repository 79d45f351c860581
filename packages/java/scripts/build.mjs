// pnpm build for the Java reactor: compiles every module and packages the jars, tests left to pnpm
// test; then writes the conformance actor's command (conformance-actor/target/actor-command.json: the
// java that built it and an argument file), with a class-data archive (AppCDS) of the actor's classes
// made by one run of it, so that a fleet of actors starts lean: a small heap, the serial collector, the
// C1 compiler only.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { javaCommand, mvn, requireJava, root } from "./java.mjs";

requireJava("build");
mvn(["-q", "package", "-DskipTests"]);

const target = join(root, "conformance-actor", "target");
// The java itself, by its absolute path: the archive belongs to it, and the orchestrator's PATH may differ.
const settings = spawnSync(javaCommand(), ["-XshowSettings:properties", "-version"], { encoding: "utf8" });
const home = /java\.home = (.+)/.exec(settings.stderr ?? "")?.[1]?.trim();
const java = home ? join(home, "bin", "java") : javaCommand();
const classpath = `${join(target, "conformance-actor.jar")}:${readFileSync(join(target, "classpath.txt"), "utf8").trim()}`;
const archive = join(target, "actor.jsa");
// The JVM's own warnings go to standard error: standard output carries the protocol alone.
const lean = [
  "-Xmx64m",
  "-XX:+UseSerialGC",
  "-XX:TieredStopAtLevel=1",
  "-Xss512k",
  "-XX:-UsePerfData",
  "-Xlog:disable",
  "-Xlog:all=warning:stderr",
];
const main = "io.github.tenantintegration.conformance.Actor";

// One run that touches what an actor loads (a manager, an HTTP request, the storages) records the archive.
rmSync(archive, { force: true });
const warm = spawnSync(java, [...lean, `-XX:ArchiveClassesAtExit=${archive}`, "-cp", classpath, main, "--warm"], {
  encoding: "utf8",
  timeout: 120_000,
});
const archived = warm.status === 0 && existsSync(archive);
if (!archived) console.warn("java build: the actor's class-data archive was not made; actors start without it");

const args = [...lean, ...(archived ? [`-XX:SharedArchiveFile=${archive}`] : []), "-cp", classpath, main];
writeFileSync(join(target, "actor.args"), `${args.map((arg) => (/\s/.test(arg) ? `"${arg}"` : arg)).join("\n")}\n`);
writeFileSync(join(target, "actor-command.json"), `${JSON.stringify([java, `@${join(target, "actor.args")}`])}\n`);
console.log(
  `java build: every module compiled and packaged; the conformance actor is ${join(target, "actor-command.json")}`,
);
