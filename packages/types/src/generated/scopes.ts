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

/** What each scope grants, as the contract describes it. */
export const scopeDescriptions: Readonly<Record<Scope, string>> = {
  "profile:read": "Read the profile of the signed-in user.",
  "users:read": "Read users.",
  "users:write": "Create and change users.",
  "contacts:read": "Read contacts.",
  "contacts:write": "Create and change contacts.",
  "tickets:read": "Read tickets.",
  "tickets:write": "Create and change tickets.",
  "files:read": "Read files.",
  "files:write": "Upload and change files.",
  "settings:read": "Read settings.",
  "settings:write": "Change settings.",
  "custom-fields:read": "Read custom fields.",
  "custom-fields:write": "Create and change custom fields.",
  "math-scripts:read": "Read math scripts.",
  "math-scripts:write": "Create and change math scripts.",
  "policy-groups:read": "Read policy groups.",
  "policy-groups:write": "Create and change policy groups.",
  "products:read": "Read products.",
  "products:write": "Create and change products.",
  "projects:read": "Read projects.",
  "devices:read": "Read devices.",
  "contracts:read": "Read contracts.",
  "contract-options:read": "Read contract options.",
  "record-types:read": "Read record types.",
  "mail-messages:read": "Read mail messages.",
  "mail-messages:write": "Create and change mail messages.",
  "ticket-filters:read": "Read ticket filters.",
  "ticket-filters:write": "Create and change ticket filters.",
  "providers:read": "Read providers.",
  "providers:write": "Create and change providers.",
  "schemas:read": "Read schemas.",
  "table-layouts:read": "Read table layouts.",
  "text-templates:read": "Read text templates.",
  "text-templates:write": "Create and change text templates.",
  "transfers:read": "Read transfers.",
  "transfers:write": "Create and change transfers.",
  "realtime:connect": "Open the realtime connection (its protocol is not shown in the service description).",
};
