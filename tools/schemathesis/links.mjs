// OpenAPI links for Schemathesis's stateful phase, added to a copy of the bundled contract (the
// contract itself is not changed): they walk a sign-in as an integration does, so that generated
// calls reach past "unknown code" and "no token" into the states the sandbox keeps.
//
//   authorize (302) ──code──▶ token (authorization_code) ──access_token──▶ revoke
//                                   └──refresh_token──▶ token (refresh_token grant) ──▶ …
//
// GET /api/v1/auth/user needs no link: every call of it carries the bearer token of the
// configuration (schemathesis.toml), which would replace a token a link gave.
//
// The authorize link reads the code out of the Location header with Schemathesis's `#regex:`
// extension of OpenAPI runtime expressions; the code exchange repeats the request's client_id and
// redirect_uri and sends the verifier of RFC 7636 Appendix B, which matches the challenge the
// contract's examples (and the authorize link's source request, when it uses that example) send.

/** The code_verifier whose S256 challenge is the contract's example challenge (RFC 7636 Appendix B). */
export const EXAMPLE_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

/** A copy of `contract` whose responses carry the links above. */
export function withTestLinks(contract) {
  const copy = structuredClone(contract);
  const paths = copy.paths;
  const respond = (path, method, status) => paths[path][method].responses[status];
  respond("/oauth/authorize", "get", "302").links = {
    exchangeCode: {
      operationId: "exchangeToken",
      requestBody: {
        grant_type: "authorization_code",
        client_id: "$request.query.client_id",
        redirect_uri: "$request.query.redirect_uri",
        code: "$response.header.Location#regex:[?&]code=([^&]+)",
        code_verifier: EXAMPLE_VERIFIER,
      },
    },
  };
  respond("/oauth/token", "post", "200").links = {
    revokeAccessToken: {
      operationId: "revokeToken",
      requestBody: {
        token: "$response.body#/access_token",
        token_type_hint: "access_token",
        client_id: "$request.body#/client_id",
      },
    },
    refresh: {
      operationId: "exchangeToken",
      requestBody: {
        grant_type: "refresh_token",
        refresh_token: "$response.body#/refresh_token",
        client_id: "$request.body#/client_id",
      },
    },
  };
  return copy;
}
