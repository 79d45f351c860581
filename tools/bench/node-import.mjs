// What importing the kit costs a Node program (issue 41 point 5): the client and the token manager,
// as a program imports them, against openapi-fetch alone (which the client builds on, so the kit's
// figure includes it); the same plus `@tenant-integration/token-manager/node` (`fileStorage`); and
// openapi-fetch against itself (A/A: the method's own noise).
//
// Each import runs in a fresh Node process on the load core (pinning.mjs), an ES module entry, which
// reports its CPU time (user + system, which leaves out the time other programs held the core) in
// two spans: the whole process up to the end of the import (Node's own start included: what a
// command-line tool's start costs, the goal's figure), and the `import()` alone (Node's module
// loader is already up then). After an untimed round (files in the page cache), every round runs
// every contender once, in a new random order; a row is the median of the rounds' own ratios with
// their middle half and range (stats.mjs). `node node-import.mjs [--quick]` prints these rows alone
// (build first).
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnNode } from "./pinning.mjs";
import { formatTimes, judgedRow, paired, QUICK, shuffled } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
/** The goal: importing the client and the token manager costs at most this multiple of importing openapi-fetch. */
const GOAL = 1.2;
const ROUNDS = QUICK ? 5 : 41;

/** What each contender imports: a program's `import` lines, as one `await`. */
const IMPORTS = {
  kit: ["@tenant-integration/client", "@tenant-integration/token-manager"],
  kitWithFile: [
    "@tenant-integration/client",
    "@tenant-integration/token-manager",
    "@tenant-integration/token-manager/node",
  ],
  openapiFetch: ["openapi-fetch"],
  openapiFetchAgain: ["openapi-fetch"],
};

/**
 * Imports `specifiers` in a fresh process; resolves its CPU time in ms, for the whole process
 * (`process`, from Node's start) and for the import alone (`import`).
 */
function timeImport(specifiers) {
  const code = [
    "const ms = ({ user, system }) => (user + system) / 1000;",
    "const before = process.cpuUsage();",
    `await Promise.all([${specifiers.map((s) => `import(${JSON.stringify(s)})`).join(", ")}]);`,
    "const after = process.cpuUsage();",
    "console.log(JSON.stringify({ process: ms(after), import: ms(after) - ms(before) }));",
  ].join("\n");
  return new Promise((resolve, reject) => {
    const child = spawnNode("load", ["--input-type=module", "-e", code], {
      cwd: here,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("exit", (status) =>
      status === 0 ? resolve(JSON.parse(out)) : reject(new Error(`import ${specifiers.join(", ")}: ${err.trim()}`)),
    );
  });
}

/** Every contender's CPU times per round (`process`, `import`), `ROUNDS` interleaved rounds after an untimed one. */
async function rounds() {
  const names = Object.keys(IMPORTS);
  for (const name of names) await timeImport(IMPORTS[name]);
  const times = { process: {}, import: {} };
  for (const name of names) {
    times.process[name] = [];
    times.import[name] = [];
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of shuffled(names)) {
      const measured = await timeImport(IMPORTS[name]);
      times.process[name].push(measured.process);
      times.import[name].push(measured.import);
    }
  }
  return times;
}

/** How the rows were measured, for BENCHMARKS.md. */
export const nodeImportMethod = `Each contender imports, in a fresh Node process on the load core (taskset), what a program imports: \`@tenant-integration/client\` and \`@tenant-integration/token-manager\` (the kit; the client brings openapi-fetch, so the figure includes it), the same plus \`@tenant-integration/token-manager/node\` (\`fileStorage\`), or \`openapi-fetch\` alone, as \`await Promise.all([import(…)])\` in an ES module entry (\`--input-type=module\`), and reports its CPU time (user + system, leaving out the time other programs held the core) for two spans: the whole process up to the end of the import, Node's own start included (what a command-line tool's start costs: the goal's figure), and the \`import()\` alone (the module loader already up). After an untimed round (files in the page cache), ${ROUNDS} rounds run every contender once each, in a new random order; a row is the median of the rounds' own ratios, with their middle half and range, and openapi-fetch against itself (A/A), in the same rounds and span, is given beside every row. The goal is judged by the rule above (met only when the middle half of the rounds lies under it; noise when the A/A is wider than the distance to it). Rerun: \`node tools/bench/node-import.mjs\` after \`pnpm build\`.`;

export async function nodeImport() {
  const times = await rounds();
  const spans = {
    process: "the whole process, Node's start included",
    import: "the import() alone",
  };
  const row = (metric, a, b, span, goal) => {
    const c = paired(times[span][a], times[span][b]);
    return judgedRow({
      metric: `Node import: ${metric} (fresh processes, CPU time of ${spans[span]}, ${ROUNDS} interleaved rounds)`,
      value: formatTimes(c, "ms"),
      c,
      // the A/A beside every row (stats.mjs): openapi-fetch against itself, same rounds and span
      aa: paired(times[span].openapiFetchAgain, times[span].openapiFetch),
      aaLabel: "openapi-fetch against itself",
      style: "times",
      goal: goal ? { atMost: goal } : undefined,
      goalText: goal ? `≤ ${goal}×` : "",
    });
  };
  const kit = "`@tenant-integration/client` and `@tenant-integration/token-manager`";
  return [
    row(`${kit} vs \`openapi-fetch\``, "kit", "openapiFetch", "process", GOAL),
    row(`${kit} and \`/node\` (\`fileStorage\`) vs \`openapi-fetch\``, "kitWithFile", "openapiFetch", "process", null),
    row(`${kit} vs \`openapi-fetch\``, "kit", "openapiFetch", "import", null),
    row(`${kit} and \`/node\` vs \`openapi-fetch\``, "kitWithFile", "openapiFetch", "import", null),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await nodeImport())
    console.log(`${row.metric}: ${row.value}${row.goal ? ` (goal ${row.goal}: ${row.verdict})` : ""}`);
}
