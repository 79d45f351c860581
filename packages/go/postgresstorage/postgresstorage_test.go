package postgresstorage_test

// The PostgreSQL storage and lock against a real PostgreSQL 15 started for each test (internal/pgtest,
// as tools/postgres does for the TypeScript kit), and the sandbox tenant with strict rotation. The
// table and rows are the shared ones of spec/token-store, which the TypeScript kit's tests hold too.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/internal/pgtest"
	"github.com/tenant-integration/sdk/packages/go/postgresstorage"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

const (
	origin   = "https://acme.tenant.test"
	clientID = "demo"
	prefix   = "tenant-integration:" + origin + ":" + clientID + ":"
)

// shared is the package's one PostgreSQL, started by the first test that needs it and killed by
// TestMain: each test uses tables or lock names of its own (and tests run one at a time).
var shared struct {
	once   sync.Once
	server *pgtest.Server
	err    error
}

func startPostgres(t *testing.T) *pgtest.Server {
	t.Helper()
	pgtest.Require(t)
	shared.once.Do(func() { shared.server, shared.err = pgtest.Launch() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.server
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.server != nil {
		shared.server.Close()
	}
	os.Exit(code)
}

func pool(t *testing.T, url string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	config.MaxConns = maxConns
	p, err := pgxpool.NewWithConfig(context.Background(), config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func codeOf(err error) tokenmanager.Code {
	var e *tokenmanager.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestSchemaSQLIsTheSharedSchemaOfEveryKit(t *testing.T) {
	spec, err := os.ReadFile("../../../spec/token-store/postgres/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	sql, err := postgresstorage.SchemaSQL("")
	if err != nil || sql != string(spec) {
		t.Fatalf("SchemaSQL(\"\") is not spec/token-store/postgres/schema.sql (%v):\n%s", err, sql)
	}
	other, _ := postgresstorage.SchemaSQL("billing.oauth_tokens")
	if !strings.Contains(other, `CREATE TABLE "billing"."oauth_tokens" (`) || !strings.Contains(other, `"oauth_tokens_expires_at"`) {
		t.Fatalf("another table's DDL:\n%s", other)
	}
	for _, bad := range []string{"Tokens", "a.b.c", "1tokens", `to"kens`, strings.Repeat("x", 49)} {
		if _, err := postgresstorage.SchemaSQL(bad); codeOf(err) != tokenmanager.CodeInvalidOptions {
			t.Errorf("table %q: %v, not INVALID_OPTIONS", bad, err)
		}
	}
}

// TestEveryNameIsTheRowOfTheSharedVectors holds the row of each of the manager's names to
// spec/token-store/vectors/sessions.json, which the TypeScript kit reads too.
func TestEveryNameIsTheRowOfTheSharedVectors(t *testing.T) {
	text, err := os.ReadFile("../../../spec/token-store/vectors/sessions.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors struct {
		Scopes []struct {
			Origin, ClientID string
			Names            map[string]string
			PostgresRows     map[string]struct {
				Origin   string `json:"origin"`
				ClientID string `json:"client_id"`
				Session  string `json:"session"`
				Kind     string `json:"kind"`
			}
		}
	}
	if err := json.Unmarshal(text, &vectors); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, scope := range vectors.Scopes {
		storage, err := postgresstorage.New(lazyPool(t), scope.Origin, scope.ClientID)
		if err != nil {
			t.Fatal(err)
		}
		for kind, want := range scope.PostgresRows {
			quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
			where := fmt.Sprintf("tenant_integration_records (origin, client_id, session, kind) = (%s, %s, %s, %s)",
				quote(want.Origin), quote(want.ClientID), quote(want.Session), quote(want.Kind))
			if got := storage.Where(scope.Names[kind]); got != where {
				t.Errorf("%s: %s, want %s", scope.Names[kind], got, where)
			}
			checked++
		}
	}
	if checked < 4 {
		t.Fatalf("only %d rows in the vectors", checked)
	}
	storage, _ := postgresstorage.New(lazyPool(t), origin, clientID)
	if err := storage.Set(context.Background(), "tenant-integration:https://other.tenant.test:demo:tokens", "{}"); codeOf(err) != tokenmanager.CodeUnknownName {
		t.Fatalf("another tenant's name: %v, not UNKNOWN_NAME", err)
	}
}

// lazyPool is a pool that never connects (nothing is sent by what uses it).
func lazyPool(t *testing.T) *pgxpool.Pool {
	return pool(t, "postgres://nobody@127.0.0.1:1/none", 4)
}

func TestRecordsAreRowsOfTheSharedTableAndTheTableIsCheckedAtFirstUse(t *testing.T) {
	server := startPostgres(t)
	ctx := context.Background()
	p := pool(t, server.URL, 4)
	storage, err := postgresstorage.New(p, origin+"/", clientID, postgresstorage.WithTable("app.tokens"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := storage.Get(ctx, prefix+"tokens"); codeOf(err) != tokenmanager.CodeSchemaMissing || !strings.Contains(err.Error(), "EnsureSchema") {
		t.Fatalf("no table: %v", err)
	}
	if _, err := p.Exec(ctx, "CREATE SCHEMA app; CREATE TABLE app.tokens (origin text)"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storage.Get(ctx, prefix+"tokens"); codeOf(err) != tokenmanager.CodeSchemaMismatch {
		t.Fatalf("another application's table: %v", err)
	}
	if _, err := postgresstorage.EnsureSchema(ctx, p, "app.tokens"); codeOf(err) != tokenmanager.CodeSchemaMismatch {
		t.Fatalf("EnsureSchema over another application's table: %v", err)
	}
	if _, err := p.Exec(ctx, "DROP TABLE app.tokens"); err != nil {
		t.Fatal(err)
	}
	for want := range []bool{true, false} {
		created, err := postgresstorage.EnsureSchema(ctx, p, "app.tokens")
		if err != nil || created != (want == 0) {
			t.Fatalf("EnsureSchema: created %v, %v", created, err)
		}
	}
	const value = `{"access_token":"at"}`
	if err := storage.Set(ctx, prefix+"42:tokens", value); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := p.QueryRow(ctx, "SELECT value FROM app.tokens WHERE session = '42' AND origin = $1 AND client_id = $2 AND kind = 'tokens'", origin, clientID).Scan(&stored); err != nil || stored != value {
		t.Fatalf("the row: %q, %v", stored, err)
	}
	if got, ok, err := storage.Get(ctx, prefix+"42:tokens"); got != value || !ok || err != nil {
		t.Fatalf("Get: %q %v %v", got, ok, err)
	}
	if err := storage.Delete(ctx, prefix+"42:tokens"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := storage.Get(ctx, prefix+"42:tokens"); ok || err != nil {
		t.Fatalf("Get after Delete: %v %v", ok, err)
	}
}

func TestTheLockLetsOneTaskRunAtATimeAcrossPoolsAndWakesAWaiterAtTheRelease(t *testing.T) {
	server := startPostgres(t)
	ctx := context.Background()
	const name = prefix + "lock"
	var locks []tokenmanager.Lock
	for range 2 {
		storage, err := postgresstorage.New(pool(t, server.URL, 4), origin, clientID, postgresstorage.WithWaitSlice(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		locks = append(locks, storage.Lock())
	}
	taken := make(chan struct{})
	release := make(chan struct{})
	var released time.Time
	go func() {
		_ = locks[0].Do(ctx, name, func(context.Context, tokenmanager.Held) error {
			close(taken)
			<-release
			released = time.Now()
			return nil
		})
	}()
	<-taken
	time.AfterFunc(300*time.Millisecond, func() { close(release) })
	var granted time.Time
	if err := locks[1].Do(ctx, name, func(context.Context, tokenmanager.Held) error { granted = time.Now(); return nil }); err != nil {
		t.Fatal(err)
	}
	// Woken by the server at the holder's ROLLBACK, not at the end of its 2 s slice.
	if wait := granted.Sub(released); wait < 0 || wait > time.Second {
		t.Fatalf("granted %s after the release", wait)
	}
}

func TestAWaitThatRunsOutIsLockTimeoutNamingTheHolderAndTheTaskNeverRuns(t *testing.T) {
	server := startPostgres(t)
	ctx := context.Background()
	const name = prefix + "lock"
	holder, _ := postgresstorage.New(pool(t, server.URL, 4), origin, clientID)
	waiter, _ := postgresstorage.New(pool(t, server.URL, 4), origin, clientID, postgresstorage.WithWaitTimeout(600*time.Millisecond), postgresstorage.WithWaitSlice(100*time.Millisecond))
	err := holder.Lock().Do(ctx, name, func(ctx context.Context, held tokenmanager.Held) error {
		ran := false
		err := waiter.Lock().Do(ctx, name, func(context.Context, tokenmanager.Held) error { ran = true; return nil })
		if ran {
			t.Error("the waiter's task ran while the lock was held")
		}
		if !held.IsHeld(ctx) {
			t.Error("the holder's lock was not held after the waiter gave up")
		}
		return err
	})
	if codeOf(err) != tokenmanager.CodeLockTimeout || !regexpMatch(`still held by the server process \d+`, err.Error()) {
		t.Fatalf("%v", err)
	}
}

func TestAHolderWhoseConnectionWasEndedIsNoLongerHeldAndItsLockIsFree(t *testing.T) {
	server := startPostgres(t)
	ctx := context.Background()
	const name = prefix + "lock"
	admin := pool(t, server.URL, 2)
	holder, _ := postgresstorage.New(pool(t, server.URL, 4), origin, clientID)
	other, _ := postgresstorage.New(pool(t, server.URL, 4), origin, clientID, postgresstorage.WithWaitTimeout(5*time.Second))
	err := holder.Lock().Do(ctx, name, func(ctx context.Context, held tokenmanager.Held) error {
		// What a killed holder, a restart or pg_terminate_backend does: the server ends its transaction.
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"); err != nil {
			return err
		}
		start := time.Now()
		if err := other.Lock().Do(ctx, name, func(context.Context, tokenmanager.Held) error { return nil }); err != nil {
			return err
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("the lock came free %s after its connection ended", time.Since(start))
		}
		if held.IsHeld(ctx) {
			t.Error("IsHeld is true after the lock's connection ended")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestManagersOnOnePostgreSQLMakeOneRefreshAfterExpiry(t *testing.T) {
	server := startPostgres(t)
	sandbox := tenanttest.Start(t)
	ctx := context.Background()
	if _, err := postgresstorage.EnsureSchema(ctx, pool(t, server.URL, 2), ""); err != nil {
		t.Fatal(err)
	}
	var managers []*tokenmanager.Manager
	for range 4 {
		storage, err := postgresstorage.New(pool(t, server.URL, 4), sandbox.URL, tenanttest.DefaultClientID)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tokenmanager.New(tokenmanager.Config{BaseURL: sandbox.URL, ClientID: tenanttest.DefaultClientID,
			RedirectURI: tenanttest.DefaultRedirectURI, Scopes: []scope.Scope{scope.ProfileRead}},
			tokenmanager.WithStorage(storage), tokenmanager.WithClock(sandbox.Now))
		if err != nil {
			t.Fatal(err)
		}
		managers = append(managers, m)
	}
	request, _ := managers[0].BeginAuthorization(ctx)
	callback, err := tenanttest.Approve(ctx, request.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := managers[0].CompleteAuthorization(ctx, callback); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		since, _ := sandbox.LastSeq()
		if err := sandbox.Advance(16 * time.Minute); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		tokens := make([]string, 12)
		for i := range tokens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				token, err := managers[i%len(managers)].AccessToken(ctx)
				if err != nil {
					t.Error(err)
				}
				tokens[i] = token
			}()
		}
		wg.Wait()
		if n, _ := sandbox.RefreshCount(since); n != 1 {
			t.Fatalf("%d refreshes after one expiry", n)
		}
		for _, token := range tokens {
			if token != tokens[0] {
				t.Fatal("the managers hold different tokens")
			}
		}
	}
}

func TestAStandbyOrReadOnlyServerIsReadOnlyAndADownServerCommandFailed(t *testing.T) {
	server := startPostgres(t)
	ctx := context.Background()
	p := pool(t, server.URL+"?default_transaction_read_only=on", 4)
	storage, _ := postgresstorage.New(p, origin, clientID)
	if _, _, err := storage.Get(ctx, prefix+"tokens"); codeOf(err) != tokenmanager.CodeReadOnly {
		t.Fatalf("a read-only server: %v", err)
	}
	err := storage.Lock().Do(ctx, prefix+"lock", func(context.Context, tokenmanager.Held) error { return nil })
	if codeOf(err) != tokenmanager.CodeStorageFailed || !strings.Contains(err.Error(), "READ_ONLY") {
		t.Fatalf("the lock on a read-only server: %v", err)
	}
	down, _ := postgresstorage.New(pool(t, "postgres://tenant@127.0.0.1:1/postgres", 4), origin, clientID, postgresstorage.WithCommandTimeout(time.Second))
	if _, _, err := down.Get(ctx, prefix+"tokens"); codeOf(err) != tokenmanager.CodeCommandFailed {
		t.Fatalf("a server that is down: %v", err)
	}
}

func regexpMatch(pattern, text string) bool { return regexp.MustCompile(pattern).MatchString(text) }

// TestEveryWaiterIsWokenAtTheReleaseToAskUntilAndNoneQueuesForTheLock: were the waiters queued for
// the exclusive lock, the server would grant it to one after another, each running its task (a read
// under the lock) before the next: a convoy as long as the fleet.
func TestEveryWaiterIsWokenAtTheReleaseToAskUntilAndNoneQueuesForTheLock(t *testing.T) {
	server := startPostgres(t)
	ctx := context.Background()
	const name = prefix + "convoy:lock"
	holder, _ := postgresstorage.New(pool(t, server.URL, 4), origin, clientID)
	var fresh atomic.Bool
	var ran atomic.Int32
	errs := make(chan error, 5)
	err := holder.Lock().Do(ctx, name, func(context.Context, tokenmanager.Held) error {
		for range 5 {
			// Slices of 30 s: only the release can wake them.
			waiter, _ := postgresstorage.New(pool(t, server.URL, 4), origin, clientID, postgresstorage.WithWaitSlice(30*time.Second))
			go func() {
				errs <- waiter.Lock().(tokenmanager.WaitingLock).DoUntil(ctx, name,
					func(context.Context) bool { return fresh.Load() },
					func(context.Context, tokenmanager.Held) error { ran.Add(1); return nil })
			}()
		}
		time.Sleep(500 * time.Millisecond)
		fresh.Store(true) // the holder stored fresh tokens, then lets go
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := <-errs; !errors.Is(err, tokenmanager.ErrLockWaitEnded) {
			t.Errorf("a waiter: %v, not the end of its wait", err)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("%d waiters took the lock after the tokens were fresh", n)
	}
}

func TestAPendingSignInIsTakenOnceAndAnExpiredOneReadsAsAbsent(t *testing.T) {
	server := startPostgres(t)
	ctx := context.Background()
	p := pool(t, server.URL, 16)
	if _, err := postgresstorage.EnsureSchema(ctx, p, "pending_take"); err != nil {
		t.Fatal(err)
	}
	storage, err := postgresstorage.New(p, origin, clientID, postgresstorage.WithTable("pending_take"))
	if err != nil {
		t.Fatal(err)
	}
	// The kit's storages are all ExpiringStorages and TakingStorages: the manager relies on it.
	var _ tokenmanager.ExpiringStorage = storage
	var _ tokenmanager.TakingStorage = storage
	name := prefix + "pending:0123456789abcdef0123456789abcdef"
	if err := storage.SetExpiring(ctx, name, `{"state":"s"}`, time.Minute); err != nil {
		t.Fatal(err)
	}
	// Eight concurrent takes, each on a connection of its own: exactly one gets the value.
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			value, ok, err := storage.Take(ctx, name)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				got++
				mu.Unlock()
				if value != `{"state":"s"}` {
					t.Errorf("Take: %q", value)
				}
			}
		}()
	}
	wg.Wait()
	if got != 1 {
		t.Fatalf("%d takes got the pending sign-in, want exactly 1", got)
	}
	if err := storage.SetExpiring(ctx, name, `{"state":"old"}`, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, ok, err := storage.Get(ctx, name); ok || err != nil {
		t.Fatalf("Get of an expired pending sign-in: %v %v", ok, err)
	}
	if _, ok, err := storage.Take(ctx, name); ok || err != nil {
		t.Fatalf("Take of an expired pending sign-in: %v %v", ok, err)
	}
	if err := storage.SetExpiring(ctx, name, "{}", 0); codeOf(err) != tokenmanager.CodeInvalidOptions {
		t.Fatalf("a lifetime of 0: %v", err)
	}
}
