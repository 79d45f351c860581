// pnpm --filter @tenant-integration/java generate: writes the api module's sources from the bundled
// contract (spec/dist/openapi.json) with the generator of packages/java/generator.
import { generator, mvn, requireJava } from "./java.mjs";

requireJava("generate");
mvn(["-q", "-pl", "generator", "package", "-DskipTests"]);
process.exit(generator([]));
