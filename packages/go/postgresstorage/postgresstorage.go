// Package postgresstorage keeps the token manager's records in PostgreSQL and brings the PostgreSQL
// refresh lock, interchangeable with @tenant-integration/token-store-postgres: the same table
// (spec/token-store/postgres/schema.sql), the same row for each record and the same
// transaction-scoped advisory lock (spec/token-store/README.md, "PostgreSQL"), so Go and Node
// processes sharing one database make one refresh per expiry between them. Over the pgx v5 pool
// (*pgxpool.Pool) the app already has: the storage checks connections out of it and gives them
// back, and never opens or closes a pool of its own.
//
//	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	_, err = postgresstorage.EnsureSchema(ctx, pool, "") // or apply SchemaSQL("") with your migrations
//	storage, err := postgresstorage.New(pool, "https://acme.tenant.test", "demo-integration")
//	manager, err := tokenmanager.New(config, tokenmanager.WithStorage(storage))
//
// A storage is made for one tenant origin and client id, the manager's: a client id may hold ':',
// so a record's name alone does not say where it ends. Each Get, Set, Delete, SetExpiring and Take
// (pending sign-ins by state: an expiring row, taken once by DELETE … RETURNING) is one autocommitted
// statement on a connection of the pool, bounded by the command timeout (5 s). At its first use the
// storage checks the table: SCHEMA_MISSING (no table: apply the schema or call EnsureSchema),
// SCHEMA_MISMATCH (another version's or application's table: nothing is written), READ_ONLY (a hot
// standby or a read-only server given as the primary). A name of another tenant or client is
// UNKNOWN_NAME; a failed statement COMMAND_FAILED. The manager reports each as STORAGE_FAILED.
//
// The Lock is a transaction-scoped advisory lock on hashtextextended(<lock name>, 0), held in a
// transaction on a connection of the pool for the refresh: a killed holder's lock is released by
// the server with its connection; a paused holder keeps it while it lives; waiters block in the
// server in slices of lock_timeout (250 ms), so a release wakes them all at once. It works through
// PgBouncer in transaction mode. See RFC 9700 §4.14.2; RFC 6749 §6, §10.4.
package postgresstorage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The defaults, the TypeScript kit's.
const (
	DefaultTable          = "tenant_integration_records"
	DefaultCommandTimeout = 5 * time.Second
	DefaultWaitTimeout    = 45 * time.Second
	DefaultWaitSlice      = 250 * time.Millisecond
	// SchemaVersion is the table's comment, which says which version of the shared schema it is.
	SchemaVersion = "tenant-integration token store v1"
)

// Keepalives are the server's TCP keepalives on the lock's connection while it holds the lock.
type Keepalives struct{ Idle, Interval, Count int }

// DefaultKeepalives finds a holder whose machine vanished dead in about 10 + 5 × 3 = 25 s.
var DefaultKeepalives = Keepalives{Idle: 10, Interval: 5, Count: 3}

// Option sets an optional behaviour of New.
type Option func(*options)

type options struct {
	table              string
	commandTimeout     time.Duration
	waitTimeout        time.Duration
	waitSlice          time.Duration
	maxLockConnections int
	keepalives         *Keepalives
}

// WithTable sets the table: "name" or "schema.name", lowercase letters, digits and _, at most 48
// characters each (default tenant_integration_records). It must exist: see EnsureSchema, SchemaSQL.
func WithTable(table string) Option { return func(o *options) { o.table = table } }

// WithCommandTimeout bounds each statement's wait for a connection and then for its answer (default
// 5 s): a server that stops answering fails a call (COMMAND_FAILED) instead of blocking it.
func WithCommandTimeout(d time.Duration) Option { return func(o *options) { o.commandTimeout = d } }

// WithWaitTimeout bounds the wait for a lock another process holds, then LOCK_TIMEOUT (default 45 s).
func WithWaitTimeout(d time.Duration) Option { return func(o *options) { o.waitTimeout = d } }

// WithWaitSlice sets how long each wait blocks in the server (lock_timeout) before the manager is
// asked whether another process stored fresh tokens (default 250 ms). A release wakes it at once.
func WithWaitSlice(d time.Duration) Option { return func(o *options) { o.waitSlice = d } }

// WithMaxLockConnections sets how many connections of the pool this process's locks may hold at
// once (default the pool's MaxConns less one): a lock holds one for the refresh and the tokens are
// written on another, so the locks must leave the writes one.
func WithMaxLockConnections(n int) Option { return func(o *options) { o.maxLockConnections = n } }

// WithKeepalives sets the server's TCP keepalives on the lock's connection (nil: the server's own).
func WithKeepalives(k *Keepalives) Option { return func(o *options) { o.keepalives = k } }

func invalid(why string) error {
	return tokenmanager.NewError(tokenmanager.CodeInvalidOptions, why, nil)
}

// tablePart is one identifier part, as PostgreSQL folds an unquoted name; 48 at most so that
// <name>_expires_at fits PostgreSQL's 63.
var tablePart = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

// tableName is a checked table name: as written (for messages), quoted (for SQL), and its own name.
type tableName struct{ text, sql, name string }

func parseTable(table string) (tableName, error) {
	parts := strings.Split(table, ".")
	ok := len(parts) <= 2
	for _, part := range parts {
		ok = ok && tablePart.MatchString(part)
	}
	if !ok {
		return tableName{}, invalid(fmt.Sprintf("table %q must be \"name\" or \"schema.name\", each of lowercase letters, digits and _ (at most 48), starting with a letter or _", table))
	}
	quoted := make([]string, len(parts))
	for i, part := range parts {
		quoted[i] = `"` + part + `"`
	}
	return tableName{text: table, sql: strings.Join(quoted, "."), name: parts[len(parts)-1]}, nil
}

// Storage keeps the manager's records in one PostgreSQL table, a row each, and brings its Lock.
// Values are stored as they are and never logged. Safe for concurrent use.
type Storage struct {
	pool   *pgxpool.Pool
	o      options
	table  tableName
	scope  scope
	lock   *Lock
	mu     sync.Mutex
	schema bool // the first-use check passed
}

// New makes a Storage on pool for the records of the manager whose BaseURL and ClientID are given.
// Errors: INVALID_OPTIONS (a baseURL that is not an http(s) URL, an empty clientID, a bad table
// name or duration, a pool whose MaxConns is 1).
func New(pool *pgxpool.Pool, baseURL, clientID string, opts ...Option) (*Storage, error) {
	o := options{table: DefaultTable, commandTimeout: DefaultCommandTimeout, waitTimeout: DefaultWaitTimeout,
		waitSlice: DefaultWaitSlice, keepalives: &DefaultKeepalives}
	for _, opt := range opts {
		opt(&o)
	}
	if pool == nil {
		return nil, invalid("pool: give the app's *pgxpool.Pool")
	}
	if o.commandTimeout <= 0 || o.waitTimeout <= 0 || o.waitSlice < time.Millisecond {
		return nil, invalid("options: every duration must be > 0 (the wait slice at least 1 ms)")
	}
	if k := o.keepalives; k != nil && (k.Idle <= 0 || k.Interval <= 0 || k.Count <= 0) {
		return nil, invalid("WithKeepalives: Idle, Interval and Count must be > 0, or give nil")
	}
	table, err := parseTable(o.table)
	if err != nil {
		return nil, err
	}
	s, err := scopeOf(baseURL, clientID)
	if err != nil {
		return nil, err
	}
	lock, err := newLock(pool, o)
	if err != nil {
		return nil, err
	}
	return &Storage{pool: pool, o: o, table: table, scope: s, lock: lock}, nil
}

// Lock is the storage's advisory lock, which the manager uses unless WithLock gives another.
func (s *Storage) Lock() tokenmanager.Lock { return s.lock }

// Where is the row of the manager's name as a condition a user can paste into a query (the
// manager's messages about a stored value name it: tokenmanager.KeyLocator).
func (s *Storage) Where(name string) string {
	row, err := s.scope.row(name)
	if err != nil {
		return name
	}
	return row.describe(s.table.text)
}

// key is the primary key of a row, in the spec's order of the name's parts.
type key struct{ origin, clientID, session, kind string }

func (k key) values() []any { return []any{k.session, k.origin, k.clientID, k.kind} }

// describe names the row as a condition to paste into a query, never its value.
func (k key) describe(table string) string {
	quote := func(text string) string { return "'" + strings.ReplaceAll(text, "'", "''") + "'" }
	return fmt.Sprintf("%s (origin, client_id, session, kind) = (%s, %s, %s, %s)", table,
		quote(k.origin), quote(k.clientID), quote(k.session), quote(k.kind))
}

// scope is the tenant and client a storage is made for.
type scope struct{ origin, clientID, prefix string }

func scopeOf(baseURL, clientID string) (scope, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return scope{}, invalid("baseURL must be the manager's BaseURL, an http(s) URL of the tenant (https://<tenant_host>)")
	}
	if clientID == "" {
		return scope{}, invalid("clientID must be the manager's ClientID, a non-empty string")
	}
	origin := u.Scheme + "://" + strings.ToLower(u.Host)
	if (u.Scheme == "https" && u.Port() == "443") || (u.Scheme == "http" && u.Port() == "80") {
		origin = u.Scheme + "://" + strings.ToLower(u.Hostname())
	}
	return scope{origin: origin, clientID: clientID, prefix: "tenant-integration:" + origin + ":" + clientID + ":"}, nil
}

var (
	sessionID = regexp.MustCompile(`^[A-Za-z0-9\-._~@+=|]{1,128}$`)
	pendingBy = regexp.MustCompile(`^pending:[0-9a-f]{32}$`)
)

// row is the row of the manager's name (spec/token-store/README.md, "Rows"). Errors: UNKNOWN_NAME.
func (s scope) row(name string) (key, error) {
	if !strings.HasPrefix(name, s.prefix) {
		return key{}, tokenmanager.NewError(tokenmanager.CodeUnknownName, fmt.Sprintf(
			"%q is not a record of %s and client %q, the tenant and client this storage was made for: give postgresstorage.New the manager's own BaseURL and ClientID", name, s.origin, s.clientID), nil)
	}
	tail := strings.TrimPrefix(name, s.prefix)
	switch {
	case pendingBy.MatchString(tail), tail == "tokens", tail == "intent", tail == "pending":
		return key{s.origin, s.clientID, "", tail}, nil
	}
	if last := strings.LastIndex(tail, ":"); last > 0 {
		session, kind := tail[:last], tail[last+1:]
		if sessionID.MatchString(session) && (kind == "tokens" || kind == "intent") {
			return key{s.origin, s.clientID, session, kind}, nil
		}
	}
	return key{}, tokenmanager.NewError(tokenmanager.CodeUnknownName, fmt.Sprintf(
		"%q is not a record of the token manager's (tokens, intent or a pending sign-in, of %s and client %q)", name, s.origin, s.clientID), nil)
}

// keyColumns are the key columns in the primary key's order, and their parameters $1..$4.
const keyColumns = "session = $1 AND origin = $2 AND client_id = $3 AND kind = $4"

// Get returns the value of name (SELECT; an expired row reads as absent).
// Errors: UNKNOWN_NAME, SCHEMA_MISSING, SCHEMA_MISMATCH, READ_ONLY, COMMAND_FAILED.
func (s *Storage) Get(ctx context.Context, name string) (string, bool, error) {
	var value string
	found := false
	err := s.statement(ctx, name, "SELECT", func(ctx context.Context, conn *pgxpool.Conn, row key) error {
		err := conn.QueryRow(ctx, "SELECT value FROM "+s.table.sql+" WHERE "+keyColumns+
			" AND (expires_at IS NULL OR expires_at > now())", row.values()...).Scan(&value)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	return value, found, err
}

// Set stores value under name (INSERT … ON CONFLICT DO UPDATE, committed when it returns).
func (s *Storage) Set(ctx context.Context, name, value string) error {
	return s.statement(ctx, name, "INSERT", func(ctx context.Context, conn *pgxpool.Conn, row key) error {
		_, err := conn.Exec(ctx, "INSERT INTO "+s.table.sql+` AS t (session, origin, client_id, kind, value, expires_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, NULL, now())
			ON CONFLICT (session, origin, client_id, kind)
			DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
			append(row.values(), value)...)
		return err
	})
}

// cleanupBatch is how many expired rows one SetExpiring deletes at most: the clean-up of one
// pending sign-in stays short (the TypeScript storage's CLEANUP_BATCH).
const cleanupBatch = 100

// SetExpiring stores value under name to be dropped once lifetime has passed (by the server's
// clock): a pending sign-in (tokenmanager.ExpiringStorage). Expired rows read as absent; up to
// cleanupBatch of them (others', never this one) are deleted by the same statement through the
// expires_at index, never a scan, skipping rows another statement holds.
// Errors: INVALID_OPTIONS (a lifetime under a millisecond), and those of Set.
func (s *Storage) SetExpiring(ctx context.Context, name, value string, lifetime time.Duration) error {
	ms := lifetime.Milliseconds()
	if lifetime%time.Millisecond != 0 {
		ms++ // a whole number of milliseconds, rounded up, as the other kits store it
	}
	if ms <= 0 {
		return tokenmanager.NewError(tokenmanager.CodeInvalidOptions, "SetExpiring's lifetime must be at least a millisecond", nil)
	}
	return s.statement(ctx, name, "INSERT", func(ctx context.Context, conn *pgxpool.Conn, row key) error {
		_, err := conn.Exec(ctx, `WITH expired AS (
				DELETE FROM `+s.table.sql+` WHERE (session, origin, client_id, kind) IN (
					SELECT session, origin, client_id, kind FROM `+s.table.sql+`
					WHERE expires_at <= now() AND NOT (`+keyColumns+`)
					ORDER BY expires_at LIMIT `+fmt.Sprint(cleanupBatch)+` FOR UPDATE SKIP LOCKED))
			INSERT INTO `+s.table.sql+` AS t (session, origin, client_id, kind, value, expires_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond', now())
			ON CONFLICT (session, origin, client_id, kind)
			DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
			append(row.values(), value, ms)...)
		return err
	})
}

// Take returns the value of name and deletes it in one statement (DELETE … RETURNING): of any
// number of concurrent Takes, in any processes, at most one gets it (tokenmanager.TakingStorage).
// An expired row is deleted and reads as absent.
// Errors: those of Delete.
func (s *Storage) Take(ctx context.Context, name string) (string, bool, error) {
	var value string
	live := false
	err := s.statement(ctx, name, "DELETE", func(ctx context.Context, conn *pgxpool.Conn, row key) error {
		err := conn.QueryRow(ctx, "DELETE FROM "+s.table.sql+" WHERE "+keyColumns+
			" RETURNING value, (expires_at IS NULL OR expires_at > now())", row.values()...).Scan(&value, &live)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil || !live {
		return "", false, err
	}
	return value, true, nil
}

// Delete removes name (DELETE).
func (s *Storage) Delete(ctx context.Context, name string) error {
	return s.statement(ctx, name, "DELETE", func(ctx context.Context, conn *pgxpool.Conn, row key) error {
		_, err := conn.Exec(ctx, "DELETE FROM "+s.table.sql+" WHERE "+keyColumns, row.values()...)
		return err
	})
}

// statement runs one statement on the row of name, after the first-use check of the table, on a
// connection of its own checked out of the pool, autocommit, within the command timeout (for the
// connection and again for the answer). A connection that did not answer is closed, never reused.
func (s *Storage) statement(ctx context.Context, name, verb string, run func(context.Context, *pgxpool.Conn, key) error) error {
	row, err := s.scope.row(name)
	if err != nil {
		return err
	}
	if err := s.checkSchema(ctx); err != nil {
		return err
	}
	what := verb + " of " + row.describe(s.table.text)
	return withConn(ctx, s.pool, s.o.commandTimeout, what, tokenmanager.CodeCommandFailed, func(ctx context.Context, conn *pgxpool.Conn) error {
		return run(ctx, conn, row)
	})
}

// withConn checks a connection out within timeout, runs work on it within timeout, and gives it
// back; a connection whose statement failed on the connection or ran out of time is closed first.
func withConn(ctx context.Context, pool *pgxpool.Pool, timeout time.Duration, what string, code tokenmanager.Code, work func(context.Context, *pgxpool.Conn) error) error {
	acquireCtx, cancel := context.WithTimeout(ctx, timeout)
	conn, err := pool.Acquire(acquireCtx)
	cancel()
	if err != nil {
		return failure(err, what+" (no connection)", code, timeout)
	}
	defer conn.Release()
	workCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := work(workCtx, conn); err != nil {
		closeIfBroken(conn, err)
		return failure(err, what, code, timeout)
	}
	return nil
}

// closeIfBroken closes a connection whose statement timed out or failed on the connection itself,
// so that the pool destroys it on Release instead of handing it out again.
func closeIfBroken(conn *pgxpool.Conn, err error) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && !strings.HasPrefix(pgErr.Code, "57P0") && !strings.HasPrefix(pgErr.Code, "08") {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = conn.Conn().Close(ctx)
}

// failure is the *Error of a statement (what) that failed with err: SCHEMA_MISSING, SCHEMA_MISMATCH
// or READ_ONLY when the SQLSTATE says so, else code; the message says why, never a value (a
// PostgreSQL error's Detail, which can quote a row, is left out of the cause).
func failure(err error, what string, code tokenmanager.Code, timeout time.Duration) error {
	var known *tokenmanager.Error
	if errors.As(err, &known) {
		return err
	}
	why := err.Error()
	var cause error = err
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		why = fmt.Sprintf("%s (%s)", pgErr.Message, pgErr.Code)
		cause = errors.New(why)
		switch pgErr.Code {
		case "42P01":
			code, why = tokenmanager.CodeSchemaMissing, "the table does not exist: "+why
		case "42703", "42804", "23502":
			code, why = tokenmanager.CodeSchemaMismatch, "the table is not this kit's: "+why
		case "25006":
			code, why = tokenmanager.CodeReadOnly, "the server refuses writes: it is a hot standby or read-only by default; give the storage the primary: "+why
		case "57014":
			why = "the server cancelled it: statement_timeout, or pg_cancel_backend: " + why
		case "42501":
			why += ": grant SELECT, INSERT, UPDATE and DELETE on the table"
		}
	} else if errors.Is(err, context.DeadlineExceeded) {
		why = fmt.Sprintf("no answer within %s", timeout)
	} else if strings.Contains(why, "connection refused") {
		why = "PostgreSQL could not be reached (connection refused): " + why
	}
	return tokenmanager.NewError(code, what+" failed: "+why, cause)
}

// inspection reads whether the table is there, its version, and whether the server takes writes.
const inspection = `SELECT to_regclass($1) IS NOT NULL, coalesce(obj_description(to_regclass($1), 'pg_class'), ''),
	obj_description(to_regclass($1), 'pg_class') IS NOT NULL, pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'`

const howToCreate = "apply its schema (postgresstorage.SchemaSQL, spec/token-store/postgres/schema.sql) with your migrations, or call postgresstorage.EnsureSchema once at start"

// refusal is the error of what inspection found, or nil when the table is this version on a
// writable server.
func refusal(table tableName, found bool, version string, commented, standby, readOnly bool) *tokenmanager.Error {
	switch {
	case standby:
		return tokenmanager.NewError(tokenmanager.CodeReadOnly, "the server is a hot standby (pg_is_in_recovery() is true): the tokens must live on the primary, where every process reads and writes them; give the storage a pool of the primary", nil)
	case readOnly:
		return tokenmanager.NewError(tokenmanager.CodeReadOnly, "the server's transactions are read-only (default_transaction_read_only is on): give the storage a pool of the primary, or a role whose transactions may write", nil)
	case !found:
		return tokenmanager.NewError(tokenmanager.CodeSchemaMissing, fmt.Sprintf("the table %s does not exist: %s", table.text, howToCreate), nil)
	case version != SchemaVersion:
		what := "it has no comment"
		if commented {
			what = fmt.Sprintf("its comment is %q", version)
		}
		return tokenmanager.NewError(tokenmanager.CodeSchemaMismatch, fmt.Sprintf(
			"the table %s is not the kit's (%s, not %q): it may be another application's table or another version's; give the storage another table name, or migrate this one", table.text, what, SchemaVersion), nil)
	}
	return nil
}

// inspect runs inspection on conn.
func inspect(ctx context.Context, conn interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, table tableName) (*tokenmanager.Error, error) {
	var found, commented, standby, readOnly bool
	var version string
	if err := conn.QueryRow(ctx, inspection, table.sql).Scan(&found, &version, &commented, &standby, &readOnly); err != nil {
		return nil, err
	}
	return refusal(table, found, version, commented, standby, readOnly), nil
}

// checkSchema makes the first-use check once it passed; one that failed is made again at the next
// call, so a migration applied while the app runs is taken without a restart.
func (s *Storage) checkSchema(ctx context.Context) error {
	s.mu.Lock()
	done := s.schema
	s.mu.Unlock()
	if done {
		return nil
	}
	var refused *tokenmanager.Error
	err := withConn(ctx, s.pool, s.o.commandTimeout, "the check of the table "+s.table.text, tokenmanager.CodeCommandFailed,
		func(ctx context.Context, conn *pgxpool.Conn) (err error) {
			refused, err = inspect(ctx, conn, s.table)
			return err
		})
	if err != nil {
		return err
	}
	if refused != nil {
		return refused
	}
	s.mu.Lock()
	s.schema = true
	s.mu.Unlock()
	return nil
}
