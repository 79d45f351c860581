// Rules of this contract that no generic OpenAPI linter knows, checked on the bundle
// (dist/openapi.json). Each rule guards a point where the contract once said more, or other, than
// the service description:
//
// - a scope is described only by its area and its access (the description shows nothing more);
// - a redirect URI matches exactly, with no loopback port exception (description §2 and §7);
// - client_id is optional on refresh (RFC 6749 §3.2.1 makes it a MUST only in the
//   authorization_code request of an unauthenticated client) and, by the contract's choice, on
//   revocation (the token names its client; RFC 7009 §5 has a public client send it, and the kit does);
// - every `scope` parameter and field accepts only the 37 names, so a generated request cannot
//   pass an invented scope as valid;
// - "holding one of the accepted scopes suffices" (description §5.9) is written as one security
//   requirement object per scope: several scopes in one object would mean all are needed.
//
// `checkContractRules(contract)` returns the violations as sentences, [] when there is none.

const ACCESS = ["read", "write", "connect"];

/** Follows a local `$ref` (`#/components/...`) of the bundle to the node it names. */
function deref(contract, node) {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === "string" && hops < 20; hops++) {
    current = current.$ref
      .replace(/^#\//, "")
      .split("/")
      .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce((at, key) => (at === undefined || at === null ? undefined : at[key]), contract);
  }
  return current;
}

/** Every string of the contract with the JSON pointer where it sits. */
function* strings(node, at = "#") {
  if (typeof node === "string") yield [at, node];
  else if (Array.isArray(node)) for (const [i, item] of node.entries()) yield* strings(item, `${at}/${i}`);
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node))
      yield* strings(value, `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`);
  }
}

function scopeDescriptions(contract, scopes) {
  const problems = [];
  for (const [scope, description] of Object.entries(scopes)) {
    const [area, access] = scope.split(":");
    const expected = `${area.replace(/-/g, " ")} area: ${access}`;
    if (!ACCESS.includes(access)) problems.push(`scope ${scope}: the access must be one of ${ACCESS.join(", ")}`);
    if (description !== expected) {
      problems.push(
        `scope ${scope} is described as "${description}"; the description shows only its area and access: "${expected}"`,
      );
    }
  }
  return problems;
}

// Phrases that grant a loopback redirect URI a port other than the registered one.
const PORT_EXCEPTION =
  /RFC 8252 §7\.3|\b(?:any|random|variable|varying|other)\s+(?:loopback\s+)?port\b|\bport\b[^.]{0,30}\b(?:may|can|might)\s+(?:vary|differ|change)\b|\bvar(?:y|ies)\s+(?:its|the)\s+port\b|port-agnostic/i;

function noPortException(contract) {
  const problems = [];
  for (const [at, text] of strings(contract)) {
    if (PORT_EXCEPTION.test(text))
      problems.push(
        `${at} lets a redirect URI vary its port ("${text.match(PORT_EXCEPTION)[0]}"); the description requires an exact match`,
      );
  }
  return problems;
}

function clientIdOptional(contract) {
  const problems = [];
  const why = {
    RefreshTokenGrantRequest:
      "RFC 6749 §3.2.1 makes it optional outside an unauthenticated client's authorization_code request",
    RevocationRequest:
      "the contract admits a revocation without it (the token names its client), though RFC 7009 §5 has a public client send it",
  };
  for (const [name, reason] of Object.entries(why)) {
    const schema = contract.components?.schemas?.[name];
    if (!schema) problems.push(`components.schemas.${name} is missing`);
    else if ((schema.required ?? []).includes("client_id")) problems.push(`${name} requires client_id; ${reason}`);
  }
  return problems;
}

function scopeEnumeration(contract, scopes) {
  const problems = [];
  const names = Object.keys(scopes);
  const targets = [];
  for (const [path, item] of Object.entries(contract.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      for (const parameter of (op.parameters ?? []).map((p) => deref(contract, p))) {
        if (parameter?.name === "scope")
          targets.push([`${method.toUpperCase()} ${path} parameter scope`, deref(contract, parameter.schema)]);
      }
    }
  }
  const refresh = contract.components?.schemas?.RefreshTokenGrantRequest;
  if (refresh?.properties?.scope)
    targets.push(["RefreshTokenGrantRequest.scope", deref(contract, refresh.properties.scope)]);
  if (targets.length === 0) problems.push("no scope parameter or field found to check");
  for (const [where, schema] of targets) {
    if (!schema || (typeof schema.pattern !== "string" && !Array.isArray(schema.enum))) {
      problems.push(
        `${where} accepts any string; enumerate the ${names.length} scope names or constrain them by pattern`,
      );
      continue;
    }
    const accepts = (value) =>
      Array.isArray(schema.enum) ? schema.enum.includes(value) : new RegExp(schema.pattern, "u").test(value);
    const missing = names.filter((name) => !accepts(name));
    if (missing.length > 0) problems.push(`${where} rejects the scope names ${missing.join(", ")}`);
    for (const unknown of ["profile:write", "admin:read", "users:read:all", "*"]) {
      if (!names.includes(unknown) && accepts(unknown))
        problems.push(`${where} accepts the unknown scope "${unknown}"`);
    }
  }
  return problems;
}

function securityAsAlternatives(contract) {
  const problems = [];
  const check = (where, security) => {
    for (const [i, requirement] of (security ?? []).entries()) {
      const count = Object.values(requirement).reduce((sum, list) => sum + list.length, 0);
      if (count > 1) {
        problems.push(
          `${where} security[${i}] lists ${count} scopes in one requirement object, which OpenAPI reads as "all of them"; give each accepted scope its own requirement object ("any one suffices", description §5.9)`,
        );
      }
    }
  };
  check("the root", contract.security);
  for (const [path, item] of Object.entries(contract.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) check(`${method.toUpperCase()} ${path}`, op.security);
  }
  return problems;
}

/** The violations of the contract's own rules, as sentences; [] when there is none. */
export function checkContractRules(contract) {
  const scopes = contract.components?.securitySchemes?.tenantOAuth?.flows?.authorizationCode?.scopes ?? {};
  return [
    ...scopeDescriptions(contract, scopes),
    ...noPortException(contract),
    ...clientIdOptional(contract),
    ...scopeEnumeration(contract, scopes),
    ...securityAsAlternatives(contract),
  ];
}
