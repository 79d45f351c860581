// The links that walk Schemathesis's stateful phase through a sign-in point at operations the
// contract has, and are added to a copy: the bundled contract itself carries no test wiring.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { withTestLinks } from "../links.mjs";

const require = createRequire(import.meta.url);
const contract = JSON.parse(readFileSync(require.resolve("@tenant-integration/openapi/openapi.json"), "utf8"));
const operationIds = Object.values(contract.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
const linksOf = (spec) =>
  Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, op]) =>
      Object.entries(op.responses).flatMap(([status, response]) =>
        Object.entries(response.links ?? {}).map(([name, link]) => ({
          from: `${method.toUpperCase()} ${path} ${status}`,
          name,
          link,
        })),
      ),
    ),
  );

describe("the stateful links", () => {
  const links = linksOf(withTestLinks(contract));

  it("walk authorize → token → revoke, and token → refresh", () => {
    expect(links.map(({ from, link }) => `${from} → ${link.operationId}`)).toEqual([
      "GET /oauth/authorize 302 → exchangeToken",
      "POST /oauth/token 200 → revokeToken",
      "POST /oauth/token 200 → exchangeToken",
    ]);
    for (const { link } of links) expect(operationIds).toContain(link.operationId);
  });

  it("take the code out of the authorize redirect and repeat that request's client_id and redirect_uri", () => {
    const exchange = links.find(({ name }) => name === "exchangeCode")?.link;
    expect(exchange?.requestBody).toMatchObject({
      grant_type: "authorization_code",
      code: "$response.header.Location#regex:[?&]code=([^&]+)",
      client_id: "$request.query.client_id",
      redirect_uri: "$request.query.redirect_uri",
    });
  });

  it("leave the bundled contract without links", () => {
    expect(linksOf(contract)).toEqual([]);
  });
});
