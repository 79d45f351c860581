package tokenmanager

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

// Config is what every manager needs: the tenant, the client and the scopes asked for.
type Config struct {
	// BaseURL is the tenant's origin, e.g. https://acme.tenant.test (https, or http to a loopback
	// host); a path is refused: the manager adds /oauth/... itself.
	BaseURL string
	// ClientID is the OAuth client identifier.
	ClientID string
	// RedirectURI is the redirect URI registered for the client, exactly as registered.
	RedirectURI string
	// Scopes are the scopes asked for (at least one, each scope.Scope.Valid).
	Scopes []scope.Scope
}

// Option sets an optional behaviour of New.
type Option func(*options)

type options struct {
	storage         Storage
	pendingStorage  Storage
	lock            Lock
	now             func() time.Time
	client          *http.Client
	logger          *slog.Logger
	leeway          time.Duration
	pendingLifetime time.Duration
	requestTimeout  time.Duration
	attempts        int
	retryDelay      time.Duration
	intentWait      time.Duration
	onChange        []func(Event)
	sessionID       *string        // New only
	maxCached       *int           // NewSessions only
	maxIdle         *time.Duration // NewSessions only
}

// WithStorage sets where the tokens live (default: a new MemoryStorage). A LockingStorage
// (filestorage, Redis) brings its cross-process lock.
func WithStorage(s Storage) Option { return func(o *options) { o.storage = s } }

// WithPendingStorage sets where pending sign-ins live (default: the storage). Each is stored under a
// name of its own, found at the callback by its state, so one storage serves any number of browsers
// and tabs; a storage that processes share must be a TakingStorage (spec/token-store/README.md).
func WithPendingStorage(s Storage) Option { return func(o *options) { o.pendingStorage = s } }

// WithSessionID makes New's Manager the manager of one session of a storage shared by many (a
// server acting for many users): its records are named tenant-integration:<origin>:<clientId>:<id>:…
// (Redis: one hash slot per session), its lock is the session's, and it completes only the sign-ins
// begun for id. id is the app's own id of its user or connection (CheckSessionID: else
// INVALID_SESSION_ID). A server usually asks a Sessions (NewSessions) for the manager of each
// session instead; without this option the manager keeps the one session of its storage.
func WithSessionID(id string) Option { return func(o *options) { o.sessionID = &id } }

// WithMaxCached bounds how many sessions' managers a Sessions keeps in memory (default 1 000): past
// it, the least recently used one that is idle is dropped (its records stay in the storage, the
// truth). An option of NewSessions only.
func WithMaxCached(n int) Option { return func(o *options) { o.maxCached = &n } }

// WithMaxIdle sets after how long unused a session's manager is dropped by its Sessions (default
// 5 min); it is made again from the storage at the next call. An option of NewSessions only.
func WithMaxIdle(d time.Duration) Option { return func(o *options) { o.maxIdle = &d } }

// WithLock replaces the storage's lock around a refresh (the bring-your-own-lock seam).
func WithLock(l Lock) Option { return func(o *options) { o.lock = l } }

// WithClock sets the clock (default time.Now): tests and the sandbox's test clock inject theirs.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithHTTPClient sets the client of the token and revocation requests (default: a client of its
// own). Its Transport is used; redirects are never followed.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithLogger sets the slog logger (default: none). No line holds a token, code, verifier or state.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithRefreshLeeway refreshes when the access token expires within d (default 60 s, at most half
// its lifetime).
func WithRefreshLeeway(d time.Duration) Option { return func(o *options) { o.leeway = d } }

// WithPendingLifetime sets how long a pending sign-in stays valid (default 10 min).
func WithPendingLifetime(d time.Duration) Option { return func(o *options) { o.pendingLifetime = d } }

// WithRequestTimeout bounds each token request (default 10 s). It counts only the time the process
// ran: a process stopped while it waits (SIGSTOP, a debugger) reads an answer that came meanwhile.
func WithRequestTimeout(d time.Duration) Option { return func(o *options) { o.requestTimeout = d } }

// WithRefreshAttempts sets the attempts of a refresh the tenant did not handle (no connection, a 503,
// a 429 by the kit's assumption: RFC 6585 §4 does not say whether the request was processed);
// default 3. Any other failure is never retried: the tenant may have rotated the token.
func WithRefreshAttempts(n int) Option { return func(o *options) { o.attempts = n } }

// WithRetryDelay sets the first pause between those attempts, doubled each time (default 300 ms).
func WithRetryDelay(d time.Duration) Option { return func(o *options) { o.retryDelay = d } }

// WithIntentWait sets how long this process watches another process's refresh of the same refresh
// token before presenting the token itself (default 20 s; spec/token-store/README.md, "Paused
// processes"). The watch counts only time in which every read of the storage answered and no two
// reads of the intent were more than a second apart: a storage outage of any length, or a pause of
// this process, starts it again from zero. A holder of this host that has exited is not waited for.
func WithIntentWait(d time.Duration) Option { return func(o *options) { o.intentWait = d } }

// WithOnChange adds a hook called on every Event (sign-in, refresh, session ended, sign-out,
// revocation, storage failure), in the goroutine that caused it. No event holds a token.
func WithOnChange(f func(Event)) Option {
	return func(o *options) { o.onChange = append(o.onChange, f) }
}

// checkScopes: at least one scope, each a scope of the service (Scope.Valid).
func checkScopes(scopes []scope.Scope) error {
	if len(scopes) == 0 {
		return invalidOption("Scopes", "give at least one scope, e.g. scope.ProfileRead")
	}
	for _, s := range scopes {
		if !s.Valid() {
			return invalidOption("Scopes", fmt.Sprintf("%q is not a scope of the service", string(s)))
		}
	}
	return nil
}

// applyOptions runs opts on o, refusing what would fail later: a nil option, a nil WithOnChange
// hook, a nil storage or lock given as an interface (e.g. the result of a constructor that failed).
func applyOptions(o *options, opts []Option) error {
	for i, opt := range opts {
		if opt == nil {
			return invalidOption("options", fmt.Sprintf("option %d is nil", i+1))
		}
		opt(o)
	}
	for _, hook := range o.onChange {
		if hook == nil {
			return invalidOption("WithOnChange", "give a function, not nil")
		}
	}
	for name, value := range map[string]any{"WithStorage": o.storage, "WithPendingStorage": o.pendingStorage, "WithLock": o.lock} {
		if value != nil && isNilPointer(value) {
			return invalidOption(name, "the value is a nil pointer (did its constructor fail?)")
		}
	}
	return nil
}

// isNilPointer: value is an interface holding a nil pointer, which compares unequal to nil.
func isNilPointer(value any) bool {
	v := reflect.ValueOf(value)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func invalidOption(name, why string) error {
	return newError(CodeInvalidOptions, "%s: %s", name, why)
}

// isLoopback is true for localhost, 127.0.0.0/8 and ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// tenantOrigin checks that base is the tenant's origin and returns it normalized.
func tenantOrigin(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", invalidOption("BaseURL", "give the tenant's origin, e.g. https://acme.tenant.test")
	}
	host := strings.ToLower(u.Hostname())
	if u.Scheme == "http" && !isLoopback(host) {
		return "", invalidOption("BaseURL", "http is allowed only to a loopback host (the local sandbox); use https")
	}
	if u.User != nil {
		return "", invalidOption("BaseURL", "must not carry credentials")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(base, "?#") {
		return "", invalidOption("BaseURL", "give the tenant's origin only: the SDK adds /oauth/... and /api/v1/... itself")
	}
	return normalTarget(u, false), nil
}

// normalTarget is scheme, host, non-default port (and path) in a normal form: what a callback must
// share with the redirect URI (RFC 6749 §3.1.2; RFC 9700 §4.4, mix-up).
func normalTarget(u *url.URL, withPath bool) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host += ":" + port
	}
	out := scheme + "://" + host
	if withPath {
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		out += path
	}
	return out
}
