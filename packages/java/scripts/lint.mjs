// pnpm lint for the Java reactor: the api module is what the contract gives (the generator's
// --check), and the code is laid out by its one formatter (palantir-java-format through Spotless).
import { generator, mvn, requireJava } from "./java.mjs";

requireJava("lint");
if (generator(["--check"]) !== 0) process.exit(1);
mvn(["-q", "spotless:check"]);
console.log("java lint: the generated api module is fresh and the code is formatted (./mvnw spotless:apply)");
