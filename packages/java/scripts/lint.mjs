// pnpm lint for the Java reactor: the api module is what the contract gives (the generator's --check).
import { generator, requireJava } from "./java.mjs";

requireJava("lint");
if (generator(["--check"]) !== 0) process.exit(1);
console.log("java lint: the generated api module is fresh");
