package redisstorage_test

// Against a real redis-server started per test on a free loopback port (and stopped, by its pid,
// after), as the TypeScript and Python kits' tests do. Skipped with -short or without redis-server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

type server struct {
	cmd  *exec.Cmd
	addr string
}

func startRedis(t *testing.T) *server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: redis-server is a real process")
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	cmd := exec.Command(path, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	probe := redis.NewClient(&redis.Options{Addr: s.addr})
	defer probe.Close()
	for start := time.Now(); probe.Ping(context.Background()).Err() != nil; {
		if time.Since(start) > 10*time.Second {
			t.Fatal("redis-server did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

func (s *server) client(t *testing.T) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	return client
}

func TestRecordsAreStoredUnderThePrefixedKeysOfTheOtherKits(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	storage, err := redisstorage.New(client, redisstorage.WithPrefix("app:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := "tenant-integration:https://acme.tenant.test:demo:tokens"
	if _, ok, err := storage.Get(ctx, key); ok || err != nil {
		t.Fatalf("absent: %v %v", ok, err)
	}
	if err := storage.Set(ctx, key, `{"a":1}`); err != nil {
		t.Fatal(err)
	}
	redisKey := "app:tenant-integration:{https://acme.tenant.test:demo}:tokens" // the other kits' key
	if raw, err := client.Get(ctx, redisKey).Result(); err != nil || raw != `{"a":1}` {
		t.Fatalf("%q %v", raw, err)
	}
	if ttl := client.TTL(ctx, redisKey).Val(); ttl != -1 {
		t.Fatalf("keys have no expiry: %v", ttl)
	}
	if value, ok, err := storage.Get(ctx, key); !ok || err != nil || value != `{"a":1}` {
		t.Fatalf("%q %v %v", value, ok, err)
	}
	if err := storage.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if n := client.Exists(ctx, redisKey).Val(); n != 0 {
		t.Fatal("not deleted")
	}
}

func TestTheLockLetsOneTaskRunAtATimeAcrossClients(t *testing.T) {
	s := startRedis(t)
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		lock, err := redisstorage.NewLock(s.client(t))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := lock.Do(context.Background(), "tenant-integration:x:y:lock", func(ctx context.Context, held tokenmanager.Held) error {
				n := running.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				if !held.IsHeld(ctx) {
					t.Error("not held inside the task")
				}
				time.Sleep(5 * time.Millisecond)
				running.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d tasks ran at once", most.Load())
	}
}

func TestAReleaseIsAnnouncedAndAWaiterSubscribesWhileItWaits(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	ctx := context.Background()
	key := "p:tenant-integration:{x:y}:lock"
	listener := client.Subscribe(ctx, redisstorage.ReleasedChannel(key))
	defer listener.Close()
	if _, err := listener.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	holder, _ := redisstorage.NewLock(s.client(t), redisstorage.WithPrefix("p:"))
	waiter, _ := redisstorage.NewLock(s.client(t), redisstorage.WithPrefix("p:"), redisstorage.WithRetryDelay(time.Minute, time.Minute))
	q := holdAndQueue(ctx, holder, waiter, "tenant-integration:x:y:lock")
	// the waiter subscribes on a connection of its own (ours is the other subscriber)
	waitForSubscribers(t, client, key, 2)
	q.release()
	bounded, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	message, err := listener.ReceiveMessage(bounded)
	if err != nil || message.Payload != "" {
		t.Fatalf("no empty release message: %v", err)
	}
	// the waiter's poll pause is a minute: only the announcement wakes it within the bound
	q.bothDone(t, bounded, "the waiter was not woken by the release")
}

// countSets is a go-redis hook recording the key of every SET its client sends (the lock's tries).
type countSets struct {
	mu   sync.Mutex
	keys []string
}

func (*countSets) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *countSets) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); strings.EqualFold(cmd.Name(), "set") && len(args) > 1 {
			c.mu.Lock()
			c.keys = append(c.keys, fmt.Sprint(args[1]))
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (*countSets) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (c *countSets) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

func TestASubscribedWaiterLeavesTheBackoffToTheAnnouncementTwoSetsWhileHeldOneAfter(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	ctx := context.Background()
	key := "p:tenant-integration:{x:y}:lock"
	holder, _ := redisstorage.NewLock(s.client(t), redisstorage.WithPrefix("p:"))
	counted := s.client(t)
	sets := &countSets{}
	counted.AddHook(sets)
	// A backoff from 1 ms doubling to a minute: polling on it, the waiter would send a SET at 1, 2,
	// 4, 8… ms, seven or more while the lock is held below; subscribed, it sends none of them.
	waiter, _ := redisstorage.NewLock(counted, redisstorage.WithPrefix("p:"),
		redisstorage.WithRetryDelay(time.Millisecond, time.Minute), redisstorage.WithWaitTimeout(2*time.Minute))
	q := holdAndQueue(ctx, holder, waiter, "tenant-integration:x:y:lock")
	waitForSubscribers(t, client, key, 1)
	time.Sleep(500 * time.Millisecond)
	q.release()
	bounded, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	q.bothDone(t, bounded, "the waiter was not woken by the release")
	// Refused before and right after subscribing, taken on the announcement (two, when the second
	// try already found the lock let go on a very slow machine).
	got := sets.sent()
	if len(got) > 3 {
		t.Fatalf("the waiter sent %d SETs (%v), want at most 3", len(got), got)
	}
	for _, k := range got {
		if k != key {
			t.Fatalf("a SET of %q, want only %q", k, key)
		}
	}
}

func TestAHeldLockTimesOutTheWaiterWithLockTimeout(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	if err := client.Set(context.Background(), "tenant-integration:{x:y}:lock", "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	lock, _ := redisstorage.NewLock(client, redisstorage.WithWaitTimeout(100*time.Millisecond))
	ran := false
	err := lock.Do(context.Background(), "tenant-integration:x:y:lock", func(context.Context, tokenmanager.Held) error { ran = true; return nil })
	if !errors.Is(err, tokenmanager.ErrLockTimeout) || ran {
		t.Fatalf("%v", err)
	}
	if value := client.Get(context.Background(), "tenant-integration:{x:y}:lock").Val(); value != "someone-else" {
		t.Fatal("another owner's lock was touched")
	}
}

func TestALeaseTakenOverIsReportedAndNotHeld(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	var lost []error
	var mu sync.Mutex
	lock, _ := redisstorage.NewLock(client, redisstorage.WithOnLeaseLost(func(err error) { mu.Lock(); lost = append(lost, err); mu.Unlock() }))
	err := lock.Do(context.Background(), "tenant-integration:x:y:lock", func(ctx context.Context, held tokenmanager.Held) error {
		client.Set(ctx, "tenant-integration:{x:y}:lock", "a-new-owner", time.Minute) // as if the lease expired while paused
		if held.IsHeld(ctx) {
			t.Error("still held after a takeover")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lost) != 1 || !errors.Is(lost[0], &tokenmanager.Error{Code: tokenmanager.CodeLeaseLost}) {
		t.Fatalf("%v", lost)
	}
	if value := client.Get(context.Background(), "tenant-integration:{x:y}:lock").Val(); value != "a-new-owner" {
		t.Fatal("the late holder released another's lock")
	}
}

func TestALeaseIsRenewedWhileTheTaskRuns(t *testing.T) {
	s := startRedis(t)
	lock, _ := redisstorage.NewLock(s.client(t), redisstorage.WithLease(150*time.Millisecond))
	err := lock.Do(context.Background(), "tenant-integration:x:y:lock", func(ctx context.Context, held tokenmanager.Held) error {
		time.Sleep(500 * time.Millisecond) // three leases
		if !held.IsHeld(ctx) {
			t.Error("the lease ran out under a running task")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func manager(t *testing.T, baseURL string, storage tokenmanager.Storage, opts ...tokenmanager.Option) *tokenmanager.Manager {
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: baseURL, ClientID: tenanttest.DefaultClientID,
		RedirectURI: tenanttest.DefaultRedirectURI, Scopes: []scope.Scope{scope.ProfileRead}}, append(opts, tokenmanager.WithStorage(storage))...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRedisDownIsStorageFailedForTheManagerAsInTheOtherKits(t *testing.T) {
	s := startRedis(t)
	storage, _ := redisstorage.New(s.client(t), redisstorage.WithCommandTimeout(300*time.Millisecond))
	m := manager(t, "http://127.0.0.1:9", storage)
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_, err := m.AccessToken(context.Background())
	var failure *tokenmanager.Error
	if !errors.Is(err, tokenmanager.ErrStorageFailed) || !errors.As(err, &failure) {
		t.Fatalf("want STORAGE_FAILED, got %v", err)
	}
	if !errors.Is(err, tokenmanager.ErrLockUnavailable) {
		t.Fatalf("the cause names the lock that could not be taken: %v", err)
	}
	if _, _, err := storage.Get(context.Background(), "k"); !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeCommandFailed}) {
		t.Fatalf("a GET on a Redis that is gone: %v", err)
	}
}

func TestAHungRedisFailsACommandAfterTheCommandTimeout(t *testing.T) {
	s := startRedis(t)
	storage, _ := redisstorage.New(s.client(t), redisstorage.WithCommandTimeout(200*time.Millisecond))
	_ = s.cmd.Process.Signal(syscall.SIGSTOP)
	defer func() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }()
	_, _, err := storage.Get(context.Background(), "k")
	if !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeCommandFailed}) || !strings.Contains(err.Error(), "no reply within") {
		t.Fatalf("%v", err)
	}
}

func TestAStoredValueNeverAppearsInAnError(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	storage, _ := redisstorage.New(client)
	// a key holding a hash: GET and SET answer WRONGTYPE-style errors naming the key, not the value
	client.HSet(context.Background(), "h", "f", "v")
	if _, _, err := storage.Get(context.Background(), "h"); err == nil || strings.Contains(err.Error(), "rt_secret") {
		t.Fatalf("%v", err)
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	err := storage.Set(context.Background(), "tokens", `{"refresh_token":"rt_secret_0123456789"}`)
	if err == nil || strings.Contains(err.Error(), "rt_secret") || !strings.Contains(err.Error(), "SET of tokens") {
		t.Fatalf("%v", err)
	}
}

func TestInvalidOptionsAreRefused(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for _, opt := range []redisstorage.Option{redisstorage.WithLease(0), redisstorage.WithRenewEvery(time.Hour),
		redisstorage.WithReplicas(1, 0), redisstorage.WithCommandTimeout(-1)} {
		if _, err := redisstorage.New(client, opt); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
			t.Errorf("%v", err)
		}
	}
}

func TestManagersOnOneRedisMakeOneRefreshAfterExpiry(t *testing.T) {
	s := startRedis(t)
	sandbox := tenanttest.Start(t)
	var managers []*tokenmanager.Manager
	for range 4 {
		storage, err := redisstorage.New(s.client(t), redisstorage.WithPrefix("fleet:"))
		if err != nil {
			t.Fatal(err)
		}
		managers = append(managers, manager(t, sandbox.URL, storage, tokenmanager.WithClock(sandbox.Now)))
	}
	request, _ := managers[0].BeginAuthorization(context.Background())
	callback, err := tenanttest.Approve(context.Background(), request.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := managers[0].CompleteAuthorization(context.Background(), callback); err != nil {
		t.Fatal(err)
	}
	oneRefreshAfterExpiry(t, sandbox, managers, len(managers)*3)
}

// oneRefreshAfterExpiry moves the sandbox's clock past expiry, asks the managers for a token from
// calls goroutines at once (in turn over the managers), and fails unless the tenant answered exactly
// one refresh and every goroutine got the same token.
func oneRefreshAfterExpiry(t *testing.T, sandbox *tenanttest.Sandbox, managers []*tokenmanager.Manager, calls int) {
	t.Helper()
	since, _ := sandbox.LastSeq()
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	tokens := make([]string, calls)
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token, err := managers[i%len(managers)].AccessToken(context.Background())
			if err != nil {
				t.Error(err)
			}
			tokens[i] = token
		}()
	}
	wg.Wait()
	if n, _ := sandbox.RefreshCount(since); n != 1 {
		t.Fatalf("%d refreshes after one expiry by %d goroutines", n, calls)
	}
	for _, token := range tokens {
		if token != tokens[0] {
			t.Fatal("the managers hold different tokens")
		}
	}
}

// counting counts the calls of a lock.
type counting struct {
	inner tokenmanager.WaitingLock
	calls atomic.Int32
}

func (c *counting) Do(ctx context.Context, name string, task func(context.Context, tokenmanager.Held) error) error {
	c.calls.Add(1)
	return c.inner.Do(ctx, name, task)
}

func (c *counting) DoUntil(ctx context.Context, name string, until func(context.Context) bool, task func(context.Context, tokenmanager.Held) error) error {
	c.calls.Add(1)
	return c.inner.DoUntil(ctx, name, until, task)
}

// noLock refreshes without any lock: the "other process" of the next test.
type noLock struct{}

func (noLock) Do(ctx context.Context, _ string, task func(context.Context, tokenmanager.Held) error) error {
	return task(ctx, always{})
}

type always struct{}

func (always) IsHeld(context.Context) bool { return true }

func TestAProcessWaitingForTheLockStopsOnceAnotherStoredFreshTokens(t *testing.T) {
	s := startRedis(t)
	sandbox := tenanttest.Start(t)
	client := s.client(t)
	open := func(opts ...tokenmanager.Option) *tokenmanager.Manager {
		storage, err := redisstorage.New(s.client(t), redisstorage.WithWaitTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return manager(t, sandbox.URL, storage, append(opts, tokenmanager.WithClock(sandbox.Now))...)
	}
	first := open()
	request, _ := first.BeginAuthorization(context.Background())
	callback, err := tenanttest.Approve(context.Background(), request.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.CompleteAuthorization(context.Background(), callback); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}
	// A holder that never lets go: only fresh tokens in storage can end the others' wait in time.
	lockKey := "tenant-integration:{" + first.BaseURL() + ":" + tenanttest.DefaultClientID + "}:lock"
	client.Set(context.Background(), lockKey, "a-holder-that-never-lets-go", time.Minute)

	waiting := open()
	type outcome struct {
		token string
		err   error
	}
	waited := make(chan outcome, 1)
	go func() {
		token, err := waiting.AccessToken(context.Background())
		waited <- outcome{token, err}
	}()
	for client.PubSubNumSub(context.Background(), lockKey+":released").Val()[lockKey+":released"] == 0 {
		time.Sleep(5 * time.Millisecond) // until it waits for the lock (subscribed)
	}
	refreshed, err := open(tokenmanager.WithLock(noLock{})).AccessToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := <-waited
	if got.err != nil || got.token != refreshed {
		t.Fatalf("the waiter should take the stored tokens: %v", got.err)
	}
	// one arriving now reads them without asking for the lock at all
	storage, _ := redisstorage.New(s.client(t))
	counted := &counting{inner: storage.Lock().(tokenmanager.WaitingLock)}
	arriving := manager(t, sandbox.URL, storage, tokenmanager.WithClock(sandbox.Now), tokenmanager.WithLock(counted))
	if token, err := arriving.AccessToken(context.Background()); err != nil || token != refreshed || counted.calls.Load() != 0 {
		t.Fatalf("fresh tokens in storage are read without the lock: %v, %d lock calls", err, counted.calls.Load())
	}
	if client.Get(context.Background(), lockKey).Val() != "a-holder-that-never-lets-go" {
		t.Fatal("the lock was touched")
	}
}

func TestALeaseTakenByASetNXWithoutAReplyIsReleasedAtTheNextTry(t *testing.T) {
	s := startRedis(t)
	// go-redis drops a connection whose reply has not come within its read timeout.
	client := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, ReadTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	name, key := "tenant-integration:x:y:lock", "tenant-integration:{x:y}:lock"
	// A lease of a minute and a wait of two seconds: a lease left behind would time the next try out.
	lock, _ := redisstorage.NewLock(client, redisstorage.WithCommandTimeout(300*time.Millisecond),
		redisstorage.WithLease(time.Minute), redisstorage.WithWaitTimeout(2*time.Second))
	if err := client.Ping(ctx).Err(); err != nil { // a connection open before the stop
		t.Fatal(err)
	}
	_ = s.cmd.Process.Signal(syscall.SIGSTOP)
	err := lock.Do(ctx, name, func(context.Context, tokenmanager.Held) error { return nil })
	// Stopped longer than the client's read timeout: the reply that comes at the resume finds no reader.
	time.Sleep(1500 * time.Millisecond)
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	if !errors.Is(err, tokenmanager.ErrStorageFailed) {
		t.Fatalf("a try while Redis is stopped: %v", err)
	}
	// Resumed, the server runs the SET NX it was sent: a lease that no task holds.
	probe := s.client(t)
	waitFor(t, "the late SET NX to run", func() bool { return probe.Exists(ctx, key).Val() == 1 })

	ran := false
	if err := lock.Do(ctx, name, func(context.Context, tokenmanager.Held) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("the next try waited on the lease of its own SET NX without a reply: %v", err)
	}
}

func TestAPendingSignInIsWrittenWithATTLAndTakenOnce(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	storage, err := redisstorage.New(client, redisstorage.WithPrefix("app:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "tenant-integration:https://acme.tenant.test:demo:pending:0f007385b6f9d4b7eeb2748605afe1a9"
	key := "app:tenant-integration:{https://acme.tenant.test:demo}:pending:0f007385b6f9d4b7eeb2748605afe1a9"
	if err := storage.SetExpiring(ctx, name, "record", 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if ttl := client.PTTL(ctx, key).Val(); ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("PTTL %s", ttl)
	}
	var wg sync.WaitGroup
	var got atomic.Int32
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if value, ok, err := storage.Take(ctx, name); err != nil {
				t.Error(err)
			} else if ok && value == "record" {
				got.Add(1)
			}
		}()
	}
	wg.Wait()
	if got.Load() != 1 || client.Exists(ctx, key).Val() != 0 {
		t.Fatalf("%d takers got it", got.Load())
	}
	if err := storage.SetExpiring(ctx, name, "record", 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	if _, ok, err := storage.Take(ctx, name); ok || err != nil {
		t.Fatalf("an expired pending sign-in was taken: %v", err)
	}
}

// Sessions on Redis: each session's records under its own hash tag, pending sign-ins under the
// client's, and a callback replayed from another browser refused before any exchange.
func TestSessionsKeepEachSessionUnderItsOwnKeys(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	storage, err := redisstorage.New(client, redisstorage.WithPrefix("app:"))
	if err != nil {
		t.Fatal(err)
	}
	sandbox := tenanttest.Start(t)
	client0 := sandbox.Clients[0]
	sessions, err := tokenmanager.NewSessions(tokenmanager.Config{BaseURL: sandbox.URL, ClientID: client0.ID, RedirectURI: client0.RedirectURIs[0],
		Scopes: []scope.Scope{scope.ProfileRead}}, tokenmanager.WithStorage(storage), tokenmanager.WithClock(sandbox.Now))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"42", "43"} {
		signIn, err := sessions.BeginSignIn(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		pending := client.Keys(ctx, "app:tenant-integration:{"+sandbox.URL+":"+client0.ID+"}:pending:*").Val()
		if len(pending) != 1 || client.PTTL(ctx, pending[0]).Val() <= 0 {
			t.Fatalf("pending keys %v", pending)
		}
		callback, err := tenanttest.Approve(ctx, signIn.URL+"&sandbox_user="+id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: tokenmanager.NewBinding()}); !errors.Is(err, tokenmanager.ErrStateMismatch) {
			t.Fatalf("another browser's callback: %v", err)
		}
		if client.Exists(ctx, pending[0]).Val() != 0 {
			t.Fatal("the refused callback left its pending sign-in")
		}
		signIn, _ = sessions.BeginSignIn(ctx, id, signIn.Binding)
		callback, _ = tenanttest.Approve(ctx, signIn.URL+"&sandbox_user="+id)
		if _, err := sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: signIn.Binding, SessionID: id}); err != nil {
			t.Fatal(err)
		}
		if client.Exists(ctx, "app:tenant-integration:{"+sandbox.URL+":"+client0.ID+":"+id+"}:tokens").Val() != 1 {
			t.Fatalf("no tokens under session %s's key: %v", id, client.Keys(ctx, "*").Val())
		}
	}
	for _, id := range []string{"42", "43"} {
		httpClient, _ := sessions.Client(id)
		response, err := httpClient.Get(sandbox.URL + "/api/v1/auth/user")
		if err != nil {
			t.Fatal(err)
		}
		var user struct {
			ID any `json:"id"`
		}
		_ = json.NewDecoder(response.Body).Decode(&user)
		response.Body.Close()
		if fmt.Sprint(user.ID) != id {
			t.Fatalf("session %s is served user %v", id, user.ID)
		}
	}
}
