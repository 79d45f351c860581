-- The token store of the Tenant Integration SDK, shared by its TypeScript, Python and Go kits:
-- one row per record of spec/token-store (tokens, a refresh intent, a pending sign-in), keyed by
-- tenant origin, client id, session id and kind. Version: the table's comment.
CREATE TABLE "tenant_integration_records" (
  origin     text        NOT NULL, -- the tenant's origin: https://acme.tenant.test
  client_id  text        NOT NULL, -- the OAuth client id
  session    text        NOT NULL, -- the app's session id; '' without one, and for pending sign-ins
  kind       text        NOT NULL, -- tokens, intent, or pending:<first 32 hex digits of SHA-256(state)>
  value      text        NOT NULL, -- the record's JSON text, as every storage stores it
  expires_at timestamptz,          -- when a pending sign-in may be dropped; NULL: never
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- The session first: an app finds and deletes a user's rows by session id alone.
  CONSTRAINT "tenant_integration_records_pkey" PRIMARY KEY (session, origin, client_id, kind),
  CONSTRAINT "tenant_integration_records_session" CHECK (session = '' OR session ~ '^[A-Za-z0-9._~@+=|-]{1,128}$'),
  CONSTRAINT "tenant_integration_records_kind" CHECK (kind IN ('tokens', 'intent', 'pending') OR kind ~ '^pending:[0-9a-f]{32}$')
);
-- Expired pending sign-ins are found (and dropped) through this index, never by a scan.
CREATE INDEX "tenant_integration_records_expires_at" ON "tenant_integration_records" (expires_at) WHERE expires_at IS NOT NULL;
COMMENT ON TABLE "tenant_integration_records" IS 'tenant-integration token store v1';
