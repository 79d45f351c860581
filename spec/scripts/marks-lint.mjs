// The contract's marks, checked wherever a user meets a claim (issue 37): the generated code of
// every kit, the READMEs, the docs samples, the example CLI and the contract's own descriptions.
// `pnpm lint` runs it (scripts/lint.mjs); spec/test/marks-lint.test.ts shows it failing on planted
// claims. Two rules:
//
// 1. Generated code: every `x-assumption` of the contract's schemas appears in each kit's generated
//    code (TypeScript types, Python models, Go types) right after ASSUMPTION_LABEL, the words of
//    spec/marks.mjs, and no generated file introduces an assumption with other words.
// 2. Claims: a statement (a sentence, a table row, a list item, a comment, a docstring) that states
//    one of the behaviours below, which the service description does not show, carries a mark: it
//    says it is assumed (or the contract's reading, the kit's assumption, not shown...), rests on a
//    section of the description, or speaks of the sandbox. A contract description whose object
//    carries an `x-assumption` is marked by it (the reference shows the mark beside it). A few
//    statements of what the kit itself does are listed in ALLOWED, each with its reason.
//
// A heuristic by nature: it finds the kinds of claim the audits found, not every possible one.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ASSUMPTION_LABEL } from "../marks.mjs";

/** The behaviours the service description does not show, each with what finds a statement of it. */
export const CLAIMS = [
  {
    name: "a 401 for a missing, expired or revoked token",
    test: (s) => /\b401\b/.test(s) && /expir|revok|missing|refus|no longer|refresh|invalid_token/i.test(s),
  },
  {
    name: "what a 403 names: the route's scope (profile:read) or the challenge's",
    test: (s) =>
      /\b403\b|\bForbidden(Error)?\b/.test(s) &&
      /profile:read|requiredScope|missing_scopes|challenge|WWW-Authenticate|scope=/.test(s),
  },
  {
    name: "an OAuth error code the tenant answers",
    test: (s) =>
      /\b(invalid_grant|invalid_client|unauthorized_client|unsupported_grant_type|invalid_scope|unsupported_token_type|unsupported_response_type|invalid_token|insufficient_scope|temporarily_unavailable)\b/.test(
        s,
      ),
  },
  {
    name: "a refresh after the access token expired",
    test: (s) =>
      /\b(an|the) expired access token\b|\bafter the access token (has )?expired\b|\bwhen it has expired\b|\bwhen the token has expired\b|\b16 minutes\b|\b16 ?\* ?60\b|\b16 ?\* ?time\.Minute\b/i.test(
        s,
      ),
  },
  {
    name: "the revocation request's body",
    test: (s) =>
      /\bJSON works\b|\bas RFC 7009 has it\b/i.test(s) ||
      (/\brevo(ke|kes|cation)\b/i.test(s) && /\bform[- ](body|encoded)\b|token_type_hint/i.test(s)),
  },
  {
    name: "a reused refresh token revokes the session",
    // Revoking the session is what POST /oauth/revoke does (description §3); revoking its whole
    // family on the reuse of a rotated-away refresh token is the assumption.
    test: (s) =>
      /\brevokes? the (whole )?(token |refresh token )?family\b|\brevokes? the whole (session|grant)\b|\breuse detection\b/i.test(
        s,
      ),
  },
];

/** ASSUMPTION_LABEL, or its first words followed by a reason ("Assumption (not in the service description, which …):"). */
const LABEL = /Assumption \(not in the service description\b/;

/** The words that mark a statement as assumed, as the description's, or as the sandbox's. */
export const MARK =
  /\bassum|not shown|not in the service description|not stated by the description|description (does not|shows no|says only|has the|says)|\bdescription §\d|\bdescription's §\d|contract's (reading|choice|bound|assumption)|kit's (assumption|reading|choice)|\bsandbox\b|\bby assumption\b/i;

/**
 * Statements of the kit's own behaviour that a pattern above catches without stating the service's,
 * by file and a fragment of the statement, each with why it is no claim about the service.
 */
export const ALLOWED = [
  {
    file: "apps/example-cli/src/cli.ts",
    fragment: "refused the token (401).",
    why: "the CLI reports the status the tenant did answer, not what a tenant answers in general",
  },
  {
    file: "packages/go/README.md",
    fragment: "`401` when `SessionOf` finds nobody logged in",
    why: "the status signinhttp's handlers answer the app's browser when the app's login finds no user: the kit's own answer, not the tenant's",
  },
  {
    file: "spec/token-store/README.md",
    fragment: "`401` when `sessionOf` finds nobody logged in",
    why: "the status the kits' sign-in handlers answer the app's browser when the app's login finds no user: the kit's own answer, not the tenant's",
  },
];

/** Files every statement of which is about the sandbox, not the service, and that say so at the top. */
export const CONTEXT_MARKED = [
  {
    file: "packages/sandbox/README.md",
    why: 'the sandbox\'s own README: its Behaviour section opens with "This is what the sandbox does, not what a real tenant is known to do"',
  },
];

const squash = (text) => text.replace(/\s+/g, " ").trim();

/** A text as sentences (a table row or list item is one). */
function sentences(text) {
  const units = [];
  for (const block of text.split(/\n\s*\n|\n(?=\s*(?:\||- |\* |\d+\. ))/)) {
    const flat = squash(block);
    if (flat === "") continue;
    if (flat.startsWith("|")) units.push(flat);
    else units.push(...flat.split(/(?<=[.!?])\s+(?=[A-Z`"(*])/));
  }
  return units;
}

/** The comments of code: runs of `//` or `#` lines, `/* … *\/` blocks, and Python docstrings. */
function codeComments(code, language) {
  const found = [];
  const lineComment = language === "py" || language === "sh" ? "#" : "//";
  const run = new RegExp(`(?:^[ \\t]*${lineComment}.*\\n?)+`, "gm");
  for (const [match] of code.matchAll(run))
    found.push(match.replace(new RegExp(`^[ \\t]*${lineComment}+ ?`, "gm"), ""));
  // Trailing comments after code on the same line.
  for (const [, comment] of code.matchAll(new RegExp(`\\S[ \\t]+${lineComment} (.*)$`, "gm"))) found.push(comment);
  if (language !== "py" && language !== "sh") {
    for (const [, body] of code.matchAll(/\/\*+([\s\S]*?)\*\//g)) found.push(body.replace(/^[ \t]*\* ?/gm, ""));
  }
  if (language === "py") for (const [, body] of code.matchAll(/"""([\s\S]*?)"""/g)) found.push(body);
  return found;
}

/** The string literals of code: what a program prints, a test's title, the example CLI's help. */
const stringLiterals = (code) => [...code.matchAll(/`([^`]*)`|"((?:[^"\\\n]|\\.)*)"/g)].map((m) => m[1] ?? m[2]);

/** The language of a fenced code block, by its fence's info string. */
const FENCES = {
  ts: "ts",
  typescript: "ts",
  js: "ts",
  javascript: "ts",
  mjs: "ts",
  go: "go",
  py: "py",
  python: "py",
  sh: "sh",
  bash: "sh",
  shell: "sh",
};

/** Plain statements, none marked by its context. */
const plain = (texts) => texts.flatMap(sentences).map((text) => ({ text, marked: false }));

/**
 * The statements of a Markdown text: its prose and the comments of its code blocks. A table's rows
 * and a list's items are marked by the paragraph that introduces them ("The OAuth error codes
 * (assumed, RFC 6749 §5.2): …"), and everything under a heading that says what is left open.
 */
function markdownStatements(markdown) {
  const units = [];
  for (const [, lang, body] of markdown.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```$/gm)) {
    const language = FENCES[lang];
    if (language === undefined) continue; // text, json, yaml...: no comments to read
    units.push(...plain(codeComments(body, language)));
    if (language === "ts") units.push(...plain(stringLiterals(body).flatMap((t) => t.split("\n"))));
  }
  let section = false;
  let intro = false;
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, "");
  for (const block of prose.split(/\n\s*\n|\n(?=\s*(?:\||- |\* |\d+\. |#+ ))/)) {
    const flat = squash(block);
    if (flat === "") continue;
    if (/^#+ /.test(flat)) {
      section = MARK.test(flat) || /leaves open/i.test(flat);
      intro = false;
      continue;
    }
    const item = /^(\||- |\* |\d+\. )/.test(flat);
    // A paragraph or item that carries the label marks every sentence in it: the reader meets the
    // label there ("… refreshes it then. **Assumption (not in the service description):** …").
    const labelled = LABEL.test(flat);
    for (const text of flat.startsWith("|") ? [flat] : sentences(flat))
      units.push({ text, marked: section || labelled || (item && intro) });
    if (!item) intro = MARK.test(flat);
  }
  return units;
}

/**
 * The statements of a file, by its kind. In code, a comment that carries ASSUMPTION_LABEL (a
 * generated doc comment of what the contract marks) marks every sentence in it: the reader meets the
 * label in the same comment. Every statement of a file in CONTEXT_MARKED is marked by the file.
 */
export function statementsOf(path, text) {
  const units = path.endsWith(".md") ? markdownStatements(text) : codeStatements(path, text);
  return CONTEXT_MARKED.some((entry) => entry.file === path) ? units.map((u) => ({ ...u, marked: true })) : units;
}

function codeStatements(path, text) {
  const extension = path.slice(path.lastIndexOf(".") + 1);
  const language = extension === "py" ? "py" : extension === "sh" ? "sh" : extension === "go" ? "go" : "ts";
  const units = codeComments(text, language).flatMap((comment) =>
    sentences(comment).map((sentence) => ({ text: sentence, marked: LABEL.test(comment) })),
  );
  // What a program prints or names (a test's title, a help text whose lines are its items) is read
  // too, a line at a time, in the samples and the example CLI: not in generated code.
  if (/^apps\/(example-cli\/src|docs\/samples)\//.test(path))
    units.push(...plain(stringLiterals(text).flatMap((t) => t.split("\n"))));
  return units;
}

/** The claims of `statements` that carry no mark, as `path: [claim] statement`. */
export function unmarkedClaims(path, statements) {
  const problems = [];
  for (const { text, marked } of statements) {
    const claim = CLAIMS.find(({ test }) => test(text));
    if (!claim || marked || MARK.test(text)) continue;
    if (ALLOWED.some((a) => a.file === path && text.includes(a.fragment))) continue;
    problems.push(`${path}: [${claim.name}] ${text}`);
  }
  return problems;
}

/** Every README of the repository a user reads (not node_modules, not generated folders). */
function readmes(root) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (entry.name.startsWith(".") || entry.name === "node_modules" || entry.name === "dist") continue;
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name === "README.md") found.push(path);
    }
  };
  walk("");
  return found.sort();
}

const filesIn = (root, dir, pattern) =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir))
        .filter((name) => pattern.test(name))
        .sort()
        .map((name) => `${dir}/${name}`)
    : [];

/** The generated code of each kit, by kit. */
export function generatedFiles(root) {
  return {
    TypeScript: ["packages/types/src/generated/openapi.ts"],
    Python: filesIn(root, "packages/python/src/tenant_integration/_generated", /\.py$/),
    Go: [...filesIn(root, "packages/go/api", /\.go$/), ...filesIn(root, "packages/go/api/scope", /\.go$/)],
    Java: filesIn(root, "packages/java/api/src/main/java/io/github/tenantintegration/api", /\.java$/),
  };
}

/** Where a user meets the contract's claims, outside the contract: the files rule 2 reads. */
export function claimFiles(root) {
  return [
    ...readmes(root),
    ...filesIn(root, "apps/docs/samples", /\.(ts|py|go|java|sh)$/),
    ...filesIn(root, "apps/example-cli/src", /\.ts$/).filter((path) => !path.endsWith(".test.ts")),
    ...Object.values(generatedFiles(root)).flat(),
  ];
}

/** Every `x-assumption` of the bundle under `node`, with whether it sits under `#/components/schemas`. */
function assumptions(node, at = "#", found = []) {
  if (Array.isArray(node)) node.forEach((item, i) => assumptions(item, `${at}/${i}`, found));
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "x-assumption" && typeof value === "string") found.push({ at, text: value });
      else assumptions(value, `${at}/${key}`, found);
    }
  }
  return found;
}

/** Letters and digits only: comment markers, line breaks, escapes and markdown do not matter. */
const bare = (text) => text.toLowerCase().replace(/[^a-z0-9]+/g, "");

/**
 * Javadoc as its reader sees it (the Java kit's generated records): the comment's leading stars and
 * line breaks gone, HTML tags dropped, entities decoded.
 */
const javadocText = (text) =>
  text
    .replace(/\n[ \t]*\*(?!\/)[ \t]*/g, " ")
    .replace(/<\/?[a-z]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))
    .replace(/&amp;/g, "&");

/** Rule 1: each kit's generated code carries every schema assumption after the label, and no other label. */
export function checkGeneratedMarks(root, contract) {
  const problems = [];
  const schemaAssumptions = assumptions(contract).filter(({ at }) => at.startsWith("#/components/schemas/"));
  for (const [kit, files] of Object.entries(generatedFiles(root))) {
    if (files.length === 0) {
      problems.push(`${kit}: no generated code found`);
      continue;
    }
    const texts = files.map((path) => {
      const text = readFileSync(join(root, path), "utf8");
      return { path, text: path.endsWith(".java") ? javadocText(text) : text };
    });
    const all = bare(texts.map(({ text }) => text).join("\n"));
    for (const { at, text } of schemaAssumptions) {
      if (!all.includes(bare(ASSUMPTION_LABEL) + bare(text).slice(0, 120)))
        problems.push(`${kit}: the x-assumption of ${at} is not in its generated code after "${ASSUMPTION_LABEL}"`);
    }
    for (const { path, text } of texts) {
      for (const [label] of text.matchAll(/Assumption \([^)]*\):|x-assumption\)?:/g)) {
        if (label !== ASSUMPTION_LABEL)
          problems.push(`${path}: introduces an assumption as "${label}", not "${ASSUMPTION_LABEL}"`);
      }
    }
  }
  return problems;
}

/** Every `description` of the bundle with its object, for rule 2. */
function describedObjects(node, found = []) {
  if (Array.isArray(node)) node.forEach((item) => describedObjects(item, found));
  else if (node !== null && typeof node === "object") {
    if (typeof node.description === "string") found.push(node);
    for (const [key, value] of Object.entries(node)) if (key !== "description") describedObjects(value, found);
  }
  return found;
}

/** Rule 2 on the contract's descriptions: an object carrying an x-assumption marks its own description. */
export function checkContractClaims(contract) {
  return describedObjects(contract).flatMap((object) =>
    typeof object["x-assumption"] === "string"
      ? []
      : unmarkedClaims("spec (bundled contract)", markdownStatements(object.description)),
  );
}

/** Rule 2 on the files where users meet claims. */
export function checkFileClaims(root, files = claimFiles(root)) {
  return files.flatMap((path) => unmarkedClaims(path, statementsOf(path, readFileSync(join(root, path), "utf8"))));
}

/** Both rules over the repository at `root`: `problems`, [] when every claim carries its mark. */
export function checkMarks(root, contract) {
  const problems = [...checkGeneratedMarks(root, contract), ...checkContractClaims(contract), ...checkFileClaims(root)];
  return { problems };
}
