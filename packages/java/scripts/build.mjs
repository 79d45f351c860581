// pnpm build for the Java reactor: compiles every module and packages the jars (the conformance
// actor's with its dependencies beside it), tests left to pnpm test.
import { mvn, requireJava } from "./java.mjs";

requireJava("build");
mvn(["-q", "package", "-DskipTests"]);
console.log("java build: every module compiled and packaged");
