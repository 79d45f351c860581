"""Schemathesis checks of what the contract says beyond its JSON schemas.

run.mjs loads this module through ``SCHEMATHESIS_HOOKS=hooks`` (with this folder on ``PYTHONPATH``);
``--checks all`` then runs these beside Schemathesis's own.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import schemathesis


@schemathesis.check
def response_schema_by_grant_type(ctx: Any, response: Any, case: Any) -> None:
    """Check that a 200 of ``POST /oauth/token`` has the shape its grant calls for.

    OpenAPI cannot tie a response schema to a field of the request, so the contract's 200 admits
    both shapes and ``x-response-schema-by-grant-type`` names the one each grant must match: a code
    exchange answers all four fields (RFC 6749 §5.1, service description §4), a refresh the refresh
    response (RFC 6749 §6). Raises AssertionError naming the first violation.
    """
    operation = case.operation
    if (
        operation.method.upper() != "POST"
        or operation.path != "/oauth/token"
        or response.status_code != 200
    ):
        return
    body = case.body if isinstance(case.body, dict) else {}
    root: dict[str, Any] = operation.schema.raw_schema
    mapping = root["paths"]["/oauth/token"]["post"]["responses"]["200"][
        "x-response-schema-by-grant-type"
    ]
    pointer = mapping.get(body.get("grant_type"))
    if pointer is None:
        return
    schema = {"$ref": pointer, "components": root["components"]}
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(response.json()), key=str
    )
    if errors:
        raise AssertionError(
            f"a {body.get('grant_type')} grant's 200 does not match {pointer}: {errors[0].message}"
        )
