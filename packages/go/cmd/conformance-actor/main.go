// Command conformance-actor is the Go actor of the conformance suite (spec/conformance/PROTOCOL.md):
// it drives tokenmanager.Manager through its public API only, one goroutine per command, reading
// its configuration from CONFORMANCE_ACTOR, commands from stdin and writing answers and events to
// stdout, one JSON object per line. It never prints a token, code, verifier or state.
//
// The faults of arm are reached through the seams an application has too: the *http.Client given
// with WithHTTPClient (sending, in-flight) and the storage given with WithStorage, whose Lock() is
// the bring-your-own-lock seam (locked, answered, "lock": "none").
//
// Build: go build -o bin/conformance-actor ./cmd/conformance-actor (pnpm build does).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/postgresstorage"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

const actorHeader = "Sandbox-Actor"

type config struct {
	Target        string         `json:"target"`
	Name          string         `json:"name"`
	Tenant        string         `json:"tenant"`
	ClientID      string         `json:"clientId"`
	RedirectURI   string         `json:"redirectUri"`
	Scopes        []string       `json:"scopes"`
	Storage       map[string]any `json:"storage"`
	ClockOffsetMs float64        `json:"clockOffsetMs"`
	Manager       struct {
		RequestTimeoutMs *float64 `json:"requestTimeoutMs"`
		IntentWaitMs     *float64 `json:"intentWaitMs"`
		LockWaitMs       *float64 `json:"lockWaitMs"`
	} `json:"manager"`
}

func ms(value float64) time.Duration { return time.Duration(value * float64(time.Millisecond)) }

// ---- output ------------------------------------------------------------------------------------

type output struct{ mu sync.Mutex }

func (o *output) say(message any) {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(message); err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = os.Stdout.Write(b.Bytes())
}

// logHandler turns every record of the kit's logger into a protocol log event.
type logHandler struct {
	out   *output
	attrs []slog.Attr
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(_ context.Context, record slog.Record) error {
	level := "debug"
	switch {
	case record.Level >= slog.LevelError:
		level = "error"
	case record.Level >= slog.LevelWarn:
		level = "warning"
	case record.Level >= slog.LevelInfo:
		level = "info"
	}
	var b strings.Builder
	b.WriteString(record.Message)
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value.Resolve())
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	record.Attrs(write)
	h.out.say(map[string]any{"event": "log", "level": level, "message": b.String()})
	return nil
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{out: h.out, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }

// ---- faults ------------------------------------------------------------------------------------

type fault struct {
	out      *output
	mu       sync.Mutex
	point    string
	then     string
	answered bool
}

func (f *fault) arm(point, then string) error {
	switch point {
	case "locked", "sending", "in-flight", "answered":
	default:
		return &actorError{"UNSUPPORTED", "no such point of the refresh protocol: " + point}
	}
	if then != "stop" && then != "hang" && then != "go" {
		return &actorError{"UNEXPECTED", "then must be stop, hang or go"}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.point, f.then, f.answered = point, then, false
	return nil
}

func (f *fault) take(point string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.point != point {
		return ""
	}
	f.point = ""
	return f.then
}

func (f *fault) reach(point string) {
	if then := f.take(point); then != "" {
		f.halt(point, then)
	}
}

// halt says where, then stops this process until SIGCONT, never goes on, or goes on at once. A hang
// stops the process too: the manager's request timer (running time) must not move it on either.
func (f *fault) halt(point, then string) {
	f.out.say(map[string]any{"event": "at", "point": point})
	switch then {
	case "stop":
		// SIGSTOP to itself stops the process a moment after kill returns (another thread may take
		// the signal): this goroutine must not go on in that moment (it would write the tokens the
		// scenario says are not written), so it also waits for the SIGCONT of the resume.
		resumed := make(chan os.Signal, 1)
		signal.Notify(resumed, syscall.SIGCONT)
		defer signal.Stop(resumed)
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		<-resumed
	case "hang":
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		select {}
	}
}

// transport names the actor on every request; a refresh passes sending as it leaves and in-flight
// once the tenant has answered (the status line and headers read, the body not yet read by the manager).
type transport struct {
	name  string
	fault *fault
	base  http.RoundTripper
}

func isRefresh(request *http.Request) bool {
	if request.Method != http.MethodPost || !strings.HasSuffix(request.URL.Path, "/oauth/token") || request.GetBody == nil {
		return false
	}
	body, err := request.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var fields map[string]any
	raw, _ := io.ReadAll(body)
	return json.Unmarshal(raw, &fields) == nil && fields["grant_type"] == "refresh_token"
}

func (t *transport) RoundTrip(request *http.Request) (*http.Response, error) {
	request = request.Clone(request.Context())
	request.Header.Set(actorHeader, t.name)
	refresh := isRefresh(request)
	if refresh {
		t.fault.mu.Lock()
		t.fault.answered = false
		t.fault.mu.Unlock()
		t.fault.reach("sending")
	}
	response, err := t.base.RoundTrip(request)
	if refresh && err == nil {
		t.fault.reach("in-flight")
		if response.StatusCode == http.StatusOK {
			t.fault.mu.Lock()
			t.fault.answered = t.fault.point == "answered"
			t.fault.mu.Unlock()
		}
	}
	return response, err
}

// armedStorage is the storage the manager is given: the real one, passing locked once the token
// record is read under the refresh lock, and answered as the tokens of an answered refresh are written.
type armedStorage struct {
	inner tokenmanager.Storage
	lock  *armedLock
	fault *fault
}

type armedLock struct {
	inner   tokenmanager.Lock
	running atomic.Int32
}

func (l *armedLock) Do(ctx context.Context, name string, task func(context.Context, tokenmanager.Held) error) error {
	return l.inner.Do(ctx, name, func(ctx context.Context, held tokenmanager.Held) error {
		l.running.Add(1)
		defer l.running.Add(-1)
		return task(ctx, held)
	})
}

// DoUntil keeps the inner lock's early end of a wait (tokenmanager.WaitingLock), so that the actor
// waits as the kit's users do: a waiter stops once another process stored fresh tokens.
func (l *armedLock) DoUntil(ctx context.Context, name string, until func(context.Context) bool, task func(context.Context, tokenmanager.Held) error) error {
	waiting, ok := l.inner.(tokenmanager.WaitingLock)
	if !ok {
		return l.Do(ctx, name, task)
	}
	return waiting.DoUntil(ctx, name, until, func(ctx context.Context, held tokenmanager.Held) error {
		l.running.Add(1)
		defer l.running.Add(-1)
		return task(ctx, held)
	})
}

// unlocked is a lock that does not lock ("lock": "none"): only to prove that the suite can fail.
type unlocked struct{}

func (unlocked) Do(ctx context.Context, _ string, task func(context.Context, tokenmanager.Held) error) error {
	return task(ctx, always{})
}

type always struct{}

func (always) IsHeld(context.Context) bool { return true }

func (s *armedStorage) Lock() tokenmanager.Lock { return s.lock }

func (s *armedStorage) Get(ctx context.Context, key string) (string, bool, error) {
	value, ok, err := s.inner.Get(ctx, key)
	if strings.HasSuffix(key, ":tokens") && s.lock.running.Load() > 0 {
		s.fault.reach("locked")
	}
	return value, ok, err
}

func (s *armedStorage) Set(ctx context.Context, key, value string) error {
	if strings.HasSuffix(key, ":tokens") {
		s.fault.mu.Lock()
		answered := s.fault.answered
		s.fault.answered = false
		s.fault.mu.Unlock()
		if answered {
			if then := s.fault.take("answered"); then != "" {
				s.fault.halt("answered", then)
			}
		}
	}
	return s.inner.Set(ctx, key, value)
}

func (s *armedStorage) Delete(ctx context.Context, key string) error { return s.inner.Delete(ctx, key) }

// ---- the actor ---------------------------------------------------------------------------------

type actorError struct{ code, message string }

func (e *actorError) Error() string { return e.message }

type actor struct {
	config    config
	out       *output
	fault     *fault
	offset    atomic.Int64 // ms
	refreshes atomic.Int64
	manager   *tokenmanager.Manager
	sessions  *tokenmanager.Sessions // the sessions feature (sessions.go), on the same storage
	http      *http.Client           // the authorize request
	api       *http.Client           // the API, through manager.Transport
	servedMu  sync.Mutex
	served    map[string]bool // the sessions a command named, closed at exit
}

// close closes the kit's objects as a user's process does when its work ends: the manager and
// every session's manager the sessions feature served (their intents' beats and retried writes stop).
func (a *actor) close() error {
	if err := a.manager.Close(); err != nil {
		return err
	}
	return a.closeSessions()
}

func openStorage(c config, out *output) (tokenmanager.Storage, tokenmanager.Lock, error) {
	kind, _ := c.Storage["kind"].(string)
	switch kind {
	case "memory":
		return tokenmanager.NewMemoryStorage(), &tokenmanager.ProcessLock{Timeout: lockWait(c)}, nil
	case "file":
		path, _ := c.Storage["path"].(string)
		var opts []filestorage.Option
		if stale, ok := c.Storage["staleMs"].(float64); ok {
			opts = append(opts, filestorage.WithStaleAfter(ms(stale)))
		}
		if c.Manager.LockWaitMs != nil {
			opts = append(opts, filestorage.WithLockTimeout(ms(*c.Manager.LockWaitMs)))
		}
		storage, err := filestorage.New(path, opts...)
		if err != nil {
			return nil, nil, err
		}
		return storage, storage.Lock(), nil
	case "redis", "redis-cluster":
		client, err := redisClient(kind, c.Storage)
		if err != nil {
			return nil, nil, err
		}
		prefix, _ := c.Storage["prefix"].(string)
		// The store's warnings (a key name, never a value) as the kit's log lines.
		opts := []redisstorage.Option{redisstorage.WithPrefix(prefix), redisstorage.WithLogger(slog.New(&logHandler{out: out}))}
		if lease, ok := c.Storage["leaseMs"].(float64); ok {
			opts = append(opts, redisstorage.WithLease(ms(lease)))
		}
		if c.Manager.LockWaitMs != nil {
			opts = append(opts, redisstorage.WithWaitTimeout(ms(*c.Manager.LockWaitMs)))
		}
		storage, err := redisstorage.New(client, opts...)
		if err != nil {
			return nil, nil, err
		}
		return storage, storage.Lock(), nil
	case "postgres":
		storage, err := postgresStorage(c)
		if err != nil {
			return nil, nil, err
		}
		return storage, storage.Lock(), nil
	}
	return nil, nil, &actorError{"UNSUPPORTED", "the Go kit has no storage of kind " + kind}
}

// postgresStorage is the PostgreSQL storage of a storage spec: a pgx pool on "url", as an app makes
// it (its application_name the actor's name, which a LOCK_TIMEOUT names), and the run's "table".
func postgresStorage(c config) (*postgresstorage.Storage, error) {
	url, _ := c.Storage["url"].(string)
	table, _ := c.Storage["table"].(string)
	poolConfig, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, &actorError{"UNEXPECTED", "storage.url: " + err.Error()}
	}
	poolConfig.ConnConfig.RuntimeParams["application_name"] = c.Name
	pool, err := pgxpool.NewWithConfig(context.Background(), poolConfig)
	if err != nil {
		return nil, err
	}
	opts := []postgresstorage.Option{postgresstorage.WithTable(table)}
	if c.Manager.LockWaitMs != nil {
		opts = append(opts, postgresstorage.WithWaitTimeout(ms(*c.Manager.LockWaitMs)))
	}
	return postgresstorage.New(pool, c.Tenant, c.ClientID, opts...)
}

// redisClient is the go-redis client of a storage spec: one server at "url" ("redis"), or a cluster
// client seeded with the nodes at "urls" ("redis-cluster"), which learns the slots from them.
func redisClient(kind string, spec map[string]any) (redis.UniversalClient, error) {
	if kind == "redis" {
		url, _ := spec["url"].(string)
		options, err := redis.ParseURL(url)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(options), nil
	}
	urls, _ := spec["urls"].([]any)
	if len(urls) == 0 {
		return nil, &actorError{"UNEXPECTED", "storage.urls: give the cluster's nodes"}
	}
	cluster := &redis.ClusterOptions{}
	for _, value := range urls {
		url, _ := value.(string)
		node, err := redis.ParseURL(url)
		if err != nil {
			return nil, err
		}
		cluster.Addrs = append(cluster.Addrs, node.Addr)
		cluster.Username, cluster.Password = node.Username, node.Password
	}
	return redis.NewClusterClient(cluster), nil
}

func lockWait(c config) time.Duration {
	if c.Manager.LockWaitMs != nil {
		return ms(*c.Manager.LockWaitMs)
	}
	return 0
}

func newActor(c config, out *output) (*actor, error) {
	a := &actor{config: c, out: out, fault: &fault{out: out}}
	a.offset.Store(int64(c.ClockOffsetMs))
	inner, lock, err := openStorage(c, out)
	if err != nil {
		return nil, err
	}
	if c.Storage["lock"] == "none" {
		lock = unlocked{}
	}
	storage := &armedStorage{inner: inner, lock: &armedLock{inner: lock}, fault: a.fault}
	scopes := make([]scope.Scope, len(c.Scopes))
	for i, s := range c.Scopes {
		scopes[i] = scope.Scope(s)
	}
	// What the Manager and the Sessions share: the clock, the log, the events and the timings.
	common := []tokenmanager.Option{
		tokenmanager.WithClock(func() time.Time { return time.Now().Add(time.Duration(a.offset.Load()) * time.Millisecond) }),
		tokenmanager.WithLogger(slog.New(&logHandler{out: out})),
		tokenmanager.WithOnChange(a.event),
	}
	if c.Manager.RequestTimeoutMs != nil {
		common = append(common, tokenmanager.WithRequestTimeout(ms(*c.Manager.RequestTimeoutMs)))
	}
	if c.Manager.IntentWaitMs != nil {
		common = append(common, tokenmanager.WithIntentWait(ms(*c.Manager.IntentWaitMs)))
	}
	opts := append([]tokenmanager.Option{
		tokenmanager.WithStorage(storage),
		tokenmanager.WithHTTPClient(&http.Client{Transport: &transport{name: c.Name, fault: a.fault, base: http.DefaultTransport}}),
	}, common...)
	settings := tokenmanager.Config{BaseURL: c.Tenant, ClientID: c.ClientID, RedirectURI: c.RedirectURI, Scopes: scopes}
	a.manager, err = tokenmanager.New(settings, opts...)
	if err != nil {
		return nil, err
	}
	// The sessions get the storage itself (its lock per session, its pending sign-ins by state), and
	// one transport kept alive for their many connections; no fault is armed on them.
	shared := http.DefaultTransport.(*http.Transport).Clone()
	shared.MaxConnsPerHost, shared.MaxIdleConnsPerHost = connectionsPerTenant, connectionsPerTenant
	// Idle connections are let go before the sandbox's (Node's 5 s keep-alive) would close them: a
	// token request sent on a connection the server is closing is reset, and a refresh that may have
	// reached the tenant is never sent again (TRANSIENT), as a server's pool would avoid.
	shared.IdleConnTimeout = idleConnections
	sessionOpts := append([]tokenmanager.Option{
		tokenmanager.WithStorage(inner),
		tokenmanager.WithHTTPClient(&http.Client{Transport: &transport{name: c.Name, fault: &fault{out: out}, base: shared}}),
	}, common...)
	if lock := sessionsLock(c, lock); lock != nil {
		sessionOpts = append(sessionOpts, tokenmanager.WithLock(lock))
	}
	if a.sessions, err = tokenmanager.NewSessions(settings, sessionOpts...); err != nil {
		return nil, err
	}
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	a.http = &http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirects}
	// The API is called as a user's code calls it: through the kit's bearer layer, which adds the
	// token and the Accept header and refreshes once after a 401.
	a.api = &http.Client{Transport: a.manager.Transport(nil), Timeout: 30 * time.Second, CheckRedirect: noRedirects}
	return a, nil
}

var eventNames = map[tokenmanager.EventKind]string{
	tokenmanager.EventTokensRefreshed: "refreshed",
	tokenmanager.EventSessionEnded:    "ended",
	tokenmanager.EventSignedOut:       "signed-out",
	tokenmanager.EventStorageFailed:   "storage-failed",
}

func (a *actor) event(e tokenmanager.Event) {
	what, ok := eventNames[e.Kind]
	if !ok {
		return
	}
	if e.Kind == tokenmanager.EventTokensRefreshed {
		a.refreshes.Add(1)
	}
	message := map[string]any{"event": "session", "what": what}
	var failure *tokenmanager.Error
	if errors.As(e.Err, &failure) {
		message["code"] = string(failure.Code)
	}
	a.out.say(message)
}

func (a *actor) get(ctx context.Context, client *http.Client, target string) (*http.Response, error) {
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	request.Header.Set(actorHeader, a.config.Name)
	return client.Do(request)
}

func (a *actor) signIn(ctx context.Context) (map[string]any, error) {
	request, err := a.manager.BeginAuthorization(ctx)
	if err != nil {
		return nil, err
	}
	response, err := a.get(ctx, a.http, request.URL)
	if err != nil {
		return nil, &actorError{"UNEXPECTED", "the authorize request failed"}
	}
	_ = response.Body.Close()
	location := response.Header.Get("Location")
	if (response.StatusCode != http.StatusFound && response.StatusCode != http.StatusSeeOther) || location == "" {
		return nil, &actorError{"UNEXPECTED", fmt.Sprintf("the authorize request was answered %d without a redirect", response.StatusCode)}
	}
	base, _ := url.Parse(request.URL)
	callback, err := base.Parse(location)
	if err != nil {
		return nil, &actorError{"UNEXPECTED", "the redirect's Location is not a URL"}
	}
	if _, err := a.manager.CompleteAuthorization(ctx, callback.String()); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// call gets the user through the kit's transport, as a user's *http.Client would: the token, the
// Accept header and the one refresh-and-retry after a 401 are the kit's. A token that could not be
// had comes back as the kit's *tokenmanager.Error inside the client's *url.Error.
func (a *actor) call(ctx context.Context) (map[string]any, error) {
	before := a.refreshes.Load()
	response, err := a.get(ctx, a.api, strings.TrimRight(a.config.Tenant, "/")+"/api/v1/auth/user")
	if err != nil {
		var kit *tokenmanager.Error
		if errors.As(err, &kit) {
			return nil, kit
		}
		return nil, &actorError{"UNEXPECTED", "the user request failed"}
	}
	_ = response.Body.Close()
	return map[string]any{"status": response.StatusCode, "refreshed": a.refreshes.Load() > before}, nil
}

func (a *actor) run(command map[string]any) {
	id := command["id"]
	ctx := context.Background()
	var result map[string]any
	var err error
	switch command["cmd"] {
	case "sign-in", "call":
		var list []session
		if list, err = sessionsOf(command); err != nil {
			break
		}
		switch {
		case list != nil && command["cmd"] == "sign-in":
			result, err = a.signInSessions(ctx, list)
		case list != nil:
			result, err = a.callSessions(ctx, list)
		case command["cmd"] == "sign-in":
			result, err = a.signIn(ctx)
		default:
			result, err = a.call(ctx)
		}
	case "refuse-ids":
		result, err = a.refuseIDs(ctx, command)
	case "replay-callback":
		result, err = a.replayCallback(ctx, command)
	case "clock":
		offset, ok := command["offsetMs"].(float64)
		if !ok {
			err = &actorError{"UNEXPECTED", "clock: offsetMs must be a number"}
			break
		}
		a.offset.Store(int64(offset))
		result = map[string]any{}
	case "arm":
		point, _ := command["point"].(string)
		then, _ := command["then"].(string)
		if err = a.fault.arm(point, then); err == nil {
			result = map[string]any{}
		}
	case "status":
		var signedIn bool
		if signedIn, err = a.manager.IsSignedIn(ctx); err == nil {
			result = map[string]any{"signedIn": signedIn}
		}
	case "revoke":
		if err = a.manager.Revoke(ctx); err == nil {
			result = map[string]any{}
		}
	case "sign-out":
		if err = a.manager.SignOut(ctx); err == nil {
			result = map[string]any{}
		}
	default:
		err = &actorError{"UNEXPECTED", fmt.Sprintf("unknown command %v", command["cmd"])}
	}
	if err != nil {
		a.out.say(map[string]any{"id": id, "ok": false, "error": describe(err)})
		return
	}
	a.out.say(map[string]any{"id": id, "ok": true, "result": result})
}

// describe is the protocol's error: the kit's stable code, else UNEXPECTED. The kit's messages hold
// no token; the actor's own hold none either.
func describe(err error) map[string]any {
	var kit *tokenmanager.Error
	var own *actorError
	switch {
	case errors.As(err, &kit):
		return map[string]any{"code": string(kit.Code), "name": "tokenmanager.Error", "message": err.Error()}
	case errors.As(err, &own):
		return map[string]any{"code": own.code, "name": "actorError", "message": own.message}
	default:
		return map[string]any{"code": "UNEXPECTED", "name": fmt.Sprintf("%T", err), "message": err.Error()}
	}
}

func main() {
	out := &output{}
	var c config
	raw := os.Getenv("CONFORMANCE_ACTOR")
	if raw == "" || json.Unmarshal([]byte(raw), &c) != nil {
		fmt.Fprintln(os.Stderr, "the actor cannot start: CONFORMANCE_ACTOR is not set or not JSON")
		os.Exit(2)
	}
	if c.Target != "go" {
		fmt.Fprintf(os.Stderr, "the actor cannot start: this actor serves the target go, not %q\n", c.Target)
		os.Exit(2)
	}
	a, err := newActor(c, out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "the actor cannot start:", err)
		os.Exit(2)
	}
	out.say(map[string]any{"event": "ready", "pid": os.Getpid(), "target": "go", "runtime": "go " + strings.TrimPrefix(runtime.Version(), "go"),
		"features": []string{"sessions"}})
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 64*1024), 1<<20)
	for scanner.Scan() {
		var command map[string]any
		decoder := json.NewDecoder(bytes.NewReader(scanner.Bytes()))
		if decoder.Decode(&command) != nil || command["cmd"] == nil {
			fmt.Fprintf(os.Stderr, "ignored a line that is not a command (%d characters)\n", len(scanner.Bytes()))
			continue
		}
		if id, ok := command["id"].(float64); !ok || id != float64(int64(id)) {
			fmt.Fprintln(os.Stderr, "ignored a command without an integer id")
			continue
		}
		command["id"] = int64(command["id"].(float64))
		if command["cmd"] == "exit" {
			// The kit's objects closed first: a close that fails is the answer, and the exit status 1.
			if err := a.close(); err != nil {
				out.say(map[string]any{"id": command["id"], "ok": false, "error": describe(err)})
				os.Exit(1)
			}
			out.say(map[string]any{"id": command["id"], "ok": true, "result": map[string]any{}})
			return
		}
		go a.run(command)
	}
	// The end of input (the orchestrator is gone): close and leave, as a process whose input ends.
	if err := a.close(); err != nil {
		fmt.Fprintln(os.Stderr, "the kit did not close:", err)
		os.Exit(1)
	}
}
