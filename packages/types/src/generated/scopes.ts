/**
 * Scope names of the `tenantOAuth` security scheme of the Tenant Integration Service contract.
 *
 * GENERATED FILE: do not edit by hand. Change the contract in spec/ and run
 * `pnpm --filter @tenant-integration/types generate`.
 */

/**
 * Every scope name of the service, exactly as the service description writes them.
 *
 * @see RFC 6749 §3.3 (access token scope)
 */
export const scopes = [
  "profile:read",
  "users:read",
  "users:write",
  "contacts:read",
  "contacts:write",
  "tickets:read",
  "tickets:write",
  "files:read",
  "files:write",
  "settings:read",
  "settings:write",
  "custom-fields:read",
  "custom-fields:write",
  "math-scripts:read",
  "math-scripts:write",
  "policy-groups:read",
  "policy-groups:write",
  "products:read",
  "products:write",
  "projects:read",
  "devices:read",
  "contracts:read",
  "contract-options:read",
  "record-types:read",
  "mail-messages:read",
  "mail-messages:write",
  "ticket-filters:read",
  "ticket-filters:write",
  "providers:read",
  "providers:write",
  "schemas:read",
  "table-layouts:read",
  "text-templates:read",
  "text-templates:write",
  "transfers:read",
  "transfers:write",
  "realtime:connect",
] as const;

/** One scope name of the service (RFC 6749 §3.3). */
export type Scope = (typeof scopes)[number];

/**
 * Each scope's area and access (`"users area: write"`), the only meaning the service description
 * gives a scope: what an area holds is not shown.
 */
export const scopeDescriptions: Readonly<Record<Scope, string>> = {
  "profile:read": "profile area: read",
  "users:read": "users area: read",
  "users:write": "users area: write",
  "contacts:read": "contacts area: read",
  "contacts:write": "contacts area: write",
  "tickets:read": "tickets area: read",
  "tickets:write": "tickets area: write",
  "files:read": "files area: read",
  "files:write": "files area: write",
  "settings:read": "settings area: read",
  "settings:write": "settings area: write",
  "custom-fields:read": "custom fields area: read",
  "custom-fields:write": "custom fields area: write",
  "math-scripts:read": "math scripts area: read",
  "math-scripts:write": "math scripts area: write",
  "policy-groups:read": "policy groups area: read",
  "policy-groups:write": "policy groups area: write",
  "products:read": "products area: read",
  "products:write": "products area: write",
  "projects:read": "projects area: read",
  "devices:read": "devices area: read",
  "contracts:read": "contracts area: read",
  "contract-options:read": "contract options area: read",
  "record-types:read": "record types area: read",
  "mail-messages:read": "mail messages area: read",
  "mail-messages:write": "mail messages area: write",
  "ticket-filters:read": "ticket filters area: read",
  "ticket-filters:write": "ticket filters area: write",
  "providers:read": "providers area: read",
  "providers:write": "providers area: write",
  "schemas:read": "schemas area: read",
  "table-layouts:read": "table layouts area: read",
  "text-templates:read": "text templates area: read",
  "text-templates:write": "text templates area: write",
  "transfers:read": "transfers area: read",
  "transfers:write": "transfers area: write",
  "realtime:connect": "realtime area: connect",
};
