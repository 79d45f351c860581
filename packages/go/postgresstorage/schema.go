package postgresstorage

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// SchemaSQL is the DDL of the table (version SchemaVersion) named table ("" for
// tenant_integration_records): what EnsureSchema runs, and what to give your migrations. For the
// default name it is exactly spec/token-store/postgres/schema.sql, every kit's. Errors:
// INVALID_OPTIONS for a table name that is not "name" or "schema.name".
func SchemaSQL(table string) (string, error) {
	if table == "" {
		table = DefaultTable
	}
	t, err := parseTable(table)
	if err != nil {
		return "", err
	}
	return schemaSQL(t), nil
}

func schemaSQL(t tableName) string {
	return fmt.Sprintf(`-- The token store of the Tenant Integration SDK, shared by its TypeScript, Python and Go kits:
-- one row per record of spec/token-store (tokens, a refresh intent, a pending sign-in), keyed by
-- tenant origin, client id, session id and kind. Version: the table's comment.
CREATE TABLE %[1]s (
  origin     text        NOT NULL, -- the tenant's origin: https://acme.tenant.test
  client_id  text        NOT NULL, -- the OAuth client id
  session    text        NOT NULL, -- the app's session id; '' without one, and for pending sign-ins
  kind       text        NOT NULL, -- tokens, intent, or pending:<first 32 hex digits of SHA-256(state)>
  value      text        NOT NULL, -- the record's JSON text, as every storage stores it
  expires_at timestamptz,          -- when a pending sign-in may be dropped; NULL: never
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- The session first: an app finds and deletes a user's rows by session id alone.
  CONSTRAINT "%[2]s_pkey" PRIMARY KEY (session, origin, client_id, kind),
  CONSTRAINT "%[2]s_session" CHECK (session = '' OR session ~ '^[A-Za-z0-9._~@+=|-]{1,128}$'),
  CONSTRAINT "%[2]s_kind" CHECK (kind IN ('tokens', 'intent', 'pending') OR kind ~ '^pending:[0-9a-f]{32}$')
);
-- Expired pending sign-ins are found (and dropped) through this index, never by a scan.
CREATE INDEX "%[2]s_expires_at" ON %[1]s (expires_at) WHERE expires_at IS NOT NULL;
COMMENT ON TABLE %[1]s IS '%[3]s';
`, t.sql, t.name, SchemaVersion)
}

// EnsureSchema creates the table (SchemaSQL) when it does not exist, in one transaction, under an
// advisory lock so that processes starting together do not race; it does nothing when the table is
// this version. The only DDL the kit ever runs, and only when called. table "" is the default.
// Errors: SCHEMA_MISMATCH (nothing changed) for a table of that name that is not this version;
// READ_ONLY on a standby or read-only server; COMMAND_FAILED when the DDL failed (42501: the role
// may not create tables).
func EnsureSchema(ctx context.Context, pool *pgxpool.Pool, table string) (created bool, err error) {
	if table == "" {
		table = DefaultTable
	}
	t, err := parseTable(table)
	if err != nil {
		return false, err
	}
	err = withConn(ctx, pool, DefaultCommandTimeout, "EnsureSchema of "+t.text, tokenmanager.CodeCommandFailed,
		func(ctx context.Context, conn *pgxpool.Conn) error {
			tx, err := conn.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			// Two processes creating the table at once would collide in the catalog: one at a time.
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "tenant-integration:schema:"+t.sql); err != nil {
				return err
			}
			refused, err := inspect(ctx, tx, t)
			if err != nil {
				return err
			}
			if refused != nil && refused.Code != tokenmanager.CodeSchemaMissing {
				return refused
			}
			if refused != nil {
				if _, err := tx.Exec(ctx, schemaSQL(t)); err != nil {
					return err
				}
				created = true
			}
			return tx.Commit(ctx)
		})
	return created, err
}
