package tokenmanager

// Sessions: a server acting for many users (spec/token-store/README.md, "Sessions"; the TypeScript
// kit's createSessions, the Python kit's Sessions). One session per user or connection, each named by
// the app's own id on every call; the manager of each made on demand and dropped when idle, so that
// memory stays bounded and the storage stays the truth.

import (
	"container/list"
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/internal/pendingrecord"
)

// The defaults of WithMaxCached and WithMaxIdle.
const (
	DefaultMaxCached = 1000
	DefaultMaxIdle   = 5 * time.Minute
)

// Sessions is the sessions of a server acting for many users (a backend whose users each connect
// their own tenant account, a job runner acting for thousands of connections): one storage, one
// session per id the app chooses (its user's id, a connection row's id; CheckSessionID). Every call
// names the session: nothing here has a default session, so a server cannot hand one user's tokens
// to another by leaving the id out. Safe for concurrent use.
//
// Each session has its own records (tenant-integration:<origin>:<clientId>:<id>:…; on Redis one hash
// slot per session), its own refresh lock (so one session's refresh never waits for another's) and
// single flight, and the promises of a Manager: one refresh per session per expiry across
// goroutines, processes and the kits sharing the storage. Managers are made on demand and kept while
// used: one idle for WithMaxIdle (default 5 min), or the least recently used past WithMaxCached
// (default 1 000), is dropped, never while a call or a refresh of it is under way, nor while it holds
// tokens it could not write (it writes them first). One *http.Client (WithHTTPClient: its Transport)
// serves every session's token requests and API calls.
//
// A web server begins a sign-in with BeginSignIn and completes it with CompleteSignIn, binding it to
// the browser that began it (package signinhttp gives both as http.Handlers); Client and Transport
// give the *http.Client of a session.
type Sessions struct {
	settings  *settings
	maxCached int
	maxIdle   time.Duration
	scheme    string            // the tenant's origin, split for the bearer layer
	host      string            //
	base      http.RoundTripper // the bearer layer's next layer: the shared client's Transport

	mu     sync.Mutex
	cached map[string]*list.Element // of order, each holding a *Manager
	order  list.List                // the most recently used first
	sweep  *time.Timer              // armed while a manager is cached
}

// NewSessions makes the Sessions of a tenant and client. It takes the options of New, except
// WithSessionID (every call names its session), and WithMaxCached and WithMaxIdle.
// Errors: INVALID_OPTIONS.
func NewSessions(config Config, opts ...Option) (*Sessions, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.sessionID != nil {
		return nil, invalidOption("WithSessionID", "a Sessions takes the session id on every call (Manager, BeginSignIn, Client…)")
	}
	s := &Sessions{maxCached: DefaultMaxCached, maxIdle: DefaultMaxIdle, cached: map[string]*list.Element{}}
	if o.maxCached != nil {
		s.maxCached = *o.maxCached
	}
	if o.maxIdle != nil {
		s.maxIdle = *o.maxIdle
	}
	if s.maxCached < 1 || s.maxIdle <= 0 {
		return nil, invalidOption("WithMaxCached, WithMaxIdle", "keep at least one manager, for a positive time")
	}
	if s.settings, err = newSettings(config, o, true); err != nil {
		return nil, err
	}
	origin, _ := url.Parse(s.settings.origin) // normalized by newSettings
	s.scheme, s.host = origin.Scheme, origin.Host
	s.base = s.settings.http.Transport
	if s.base == nil {
		s.base = http.DefaultTransport
	}
	return s, nil
}

// Manager returns the manager of session id, made on demand (from the storage: nothing is read
// until it is used) and cached. Hold it for the call at hand and ask again for the next: a manager
// left idle is dropped, and asking costs a map lookup. Errors: INVALID_SESSION_ID.
func (s *Sessions) Manager(id string) (*Manager, error) {
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	return s.manager(id), nil
}

// manager is the cached manager of a valid id, made when there is none, and moved to the front.
func (s *Sessions) manager(id string) *Manager {
	s.mu.Lock()
	defer s.mu.Unlock()
	if element, ok := s.cached[id]; ok {
		s.order.MoveToFront(element)
		m := element.Value.(*Manager)
		m.touch()
		return m
	}
	m := sessionManager(s.settings, id)
	m.touch()
	s.cached[id] = s.order.PushFront(m)
	s.dropPastMaxCached()
	if s.sweep == nil {
		s.sweep = time.AfterFunc(s.maxIdle, s.dropIdle)
	}
	return m
}

// acquire is the manager of a valid id, in use until its leave.
func (s *Sessions) acquire(id string) *Manager {
	m := s.manager(id)
	m.enter()
	return m
}

// droppable: no call or refresh of m is under way, and it holds no tokens it could not write.
func droppable(m *Manager) bool { return m.inUse.Load() == 0 && !m.hasUnsaved() }

// dropPastMaxCached drops the least recently used droppable managers while more than maxCached are
// cached; called with s.mu held.
func (s *Sessions) dropPastMaxCached() {
	for element := s.order.Back(); element != nil && len(s.cached) > s.maxCached; {
		previous := element.Prev()
		if m := element.Value.(*Manager); droppable(m) {
			s.drop(element, "least recently used past the cache's bound")
		}
		element = previous
	}
}

// drop removes a cached manager; called with s.mu held. Its armed token is disarmed: the timer that
// would disarm it at the token's freshness deadline would keep the manager in memory until then.
func (s *Sessions) drop(element *list.Element, why string) {
	m := s.order.Remove(element).(*Manager)
	delete(s.cached, m.session)
	m.mu.Lock()
	m.disarm()
	m.mu.Unlock()
	m.log.Debug("the session's manager is dropped from memory (the storage keeps its records)", "why", why)
}

// dropIdle runs on the sweep timer: it drops every droppable manager idle for maxIdle, has those
// idle with unwritten tokens write them (each is dropped at a later sweep once they are written),
// and arms the timer again while any is cached.
func (s *Sessions) dropIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Since(s.settings.started)
	next := s.maxIdle
	for element := s.order.Back(); element != nil; {
		previous := element.Prev()
		m := element.Value.(*Manager)
		idle := now - time.Duration(m.lastUsed.Load())
		switch {
		case idle < s.maxIdle:
			next = min(next, s.maxIdle-idle)
		case m.inUse.Load() > 0:
			next = min(next, time.Second)
		case m.hasUnsaved():
			next = min(next, time.Second)
			go m.writeUnsaved(context.Background())
		default:
			s.drop(element, "idle")
		}
		element = previous
	}
	s.sweep = nil
	if len(s.cached) > 0 {
		s.sweep = time.AfterFunc(max(next, 10*time.Millisecond), s.dropIdle)
	}
}

// RedirectURI is the redirect URI of the Config, as given: the public callback URL (signinhttp's
// callback rebuilds the callback URL from it, never from Host or X-Forwarded-* headers).
func (s *Sessions) RedirectURI() string { return s.settings.redirectURI }

// PendingLifetime is how long a sign-in stays pending (WithPendingLifetime).
func (s *Sessions) PendingLifetime() time.Duration { return s.settings.o.pendingLifetime }

// Cached is how many sessions' managers are in memory.
func (s *Sessions) Cached() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cached)
}

// SignIn is a sign-in begun for a session: where to send the browser, and the binding that browser
// must bring to the callback (the value of the cookie signinhttp sets). Neither is printed by String.
type SignIn struct {
	AuthorizationRequest
	// SessionID is the session the tokens will be stored under.
	SessionID string
	// Binding is the browser binding: the one given to BeginSignIn, or a new one.
	Binding string
}

// String leaves the URL (it holds the state) and the binding out.
func (s SignIn) String() string {
	return "SignIn{SessionID: " + s.SessionID + ", URL: [redacted], Binding: [redacted], ExpiresAt: " + s.ExpiresAt.Format(time.RFC3339) + "}"
}

// BeginSignIn begins a sign-in for session id, bound to the browser that will bring binding to the
// callback: the value of a cookie of that browser, or the app's own value that only that browser's
// requests carry (its server session's id); "" makes a new binding (NewBinding), returned in SignIn.
// The pending sign-in is stored by its state with SHA-256(binding), never the binding itself; any
// number may be pending. scopes default to the Config's. Errors: INVALID_SESSION_ID, INVALID_OPTIONS
// (a scope), STORAGE_FAILED. See RFC 6749 §4.1.1, §10.12; RFC 7636 §4.3; RFC 9700 §4.7.1.
func (s *Sessions) BeginSignIn(ctx context.Context, id, binding string, scopes ...scope.Scope) (*SignIn, error) {
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	if binding == "" {
		binding = NewBinding()
	}
	request, err := beginSignIn(ctx, s.settings, id, BindingHash(binding), scopes)
	if err != nil {
		return nil, err
	}
	return &SignIn{AuthorizationRequest: *request, SessionID: id, Binding: binding}, nil
}

// Callback is what a server's callback brings to CompleteSignIn.
type Callback struct {
	// URL is the whole URL the browser was sent back to: the configured redirect URI with the
	// request's query (never rebuilt from Host or X-Forwarded-* headers).
	URL string
	// Binding is the browser binding the request brought (its cookie, or the app's own value); ""
	// when it brought none.
	Binding string
	// SessionID, when set, must be the session the sign-in was begun for (the app's user logged in
	// on this browser now); else STATE_MISMATCH, before any exchange.
	SessionID string
}

// SignedIn is a completed sign-in: whose session, and its expiry and scope.
type SignedIn struct {
	SessionID string
	SessionInfo
}

// CompleteSignIn completes a sign-in begun with BeginSignIn: the checks of Manager's
// CompleteAuthorization, in the same order, with two more before any exchange (STATE_MISMATCH):
// the callback must bring the binding of the browser that began the sign-in, and the sign-in must
// have been begun for a session (and for callback.SessionID, when set). The tokens are stored under
// the sign-in's session. Errors: those of CompleteAuthorization, and INVALID_SESSION_ID for a bad
// callback.SessionID. See RFC 6749 §4.1.2, §10.12; RFC 9700 §4.7.1.
func (s *Sessions) CompleteSignIn(ctx context.Context, callback Callback) (SignedIn, error) {
	if callback.SessionID != "" {
		if err := CheckSessionID(callback.SessionID); err != nil {
			return SignedIn{}, err
		}
	}
	checked, err := takeCallback(ctx, s.settings, callback.URL, callback.Binding, func(record *pendingrecord.Record) bool {
		return record.SessionID != "" && (callback.SessionID == "" || record.SessionID == callback.SessionID)
	})
	if err != nil {
		return SignedIn{}, err
	}
	m := s.acquire(checked.pending.SessionID)
	defer m.leave()
	info, err := m.exchange(ctx, checked)
	if err != nil {
		return SignedIn{}, err
	}
	return SignedIn{SessionID: m.session, SessionInfo: info}, nil
}

// IsSignedIn reports whether session id has tokens in the storage (perhaps expired: a refresh may
// still work). Errors: INVALID_SESSION_ID, STORAGE_FAILED.
func (s *Sessions) IsSignedIn(ctx context.Context, id string) (bool, error) {
	m, err := s.Manager(id)
	if err != nil {
		return false, err
	}
	return m.IsSignedIn(ctx)
}

// Revoke revokes session id at the tenant (RFC 7009; Manager.Revoke) and clears its tokens.
// Errors: INVALID_SESSION_ID, and Manager.Revoke's.
func (s *Sessions) Revoke(ctx context.Context, id string) error {
	m, err := s.Manager(id)
	if err != nil {
		return err
	}
	return m.Revoke(ctx)
}

// SignOut forgets session id's tokens (deletes them from the storage), with no request.
// Errors: INVALID_SESSION_ID, STORAGE_FAILED.
func (s *Sessions) SignOut(ctx context.Context, id string) error {
	m, err := s.Manager(id)
	if err != nil {
		return err
	}
	return m.SignOut(ctx)
}

// Transport is the bearer http.RoundTripper of session id (Manager.Transport: the token to the
// tenant's origin only, one refresh and retry after a 401) over the shared client's transport. Each
// request asks the Sessions for the session's manager, so the RoundTripper may be kept for as long
// as the app likes while the manager behind it is dropped when idle and made again when needed.
// Layer transport.New around it for retries and logging. Errors: INVALID_SESSION_ID.
func (s *Sessions) Transport(id string) (http.RoundTripper, error) {
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	return &sessionTransport{sessions: s, id: id}, nil
}

// Client is an *http.Client whose requests to the tenant carry session id's token (Transport).
// Errors: INVALID_SESSION_ID.
//
//	client, err := sessions.Client(user.ID)
//	response, err := client.Get(tenant + "/api/v1/auth/user")
func (s *Sessions) Client(id string) (*http.Client, error) {
	rt, err := s.Transport(id)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt}, nil
}

// sessionTransport is the RoundTripper of Sessions.Transport.
type sessionTransport struct {
	sessions *Sessions
	id       string
}

func (t *sessionTransport) RoundTrip(request *http.Request) (*http.Response, error) {
	m := t.sessions.acquire(t.id)
	defer m.leave()
	return m.sessionBearer(t.sessions).RoundTrip(request)
}

// sessionBearer is the manager's bearer layer over the Sessions' shared transport, made at its first
// request.
func (m *Manager) sessionBearer(s *Sessions) *bearer {
	if b := m.viaSessions.Load(); b != nil {
		return b
	}
	m.viaSessions.CompareAndSwap(nil, &bearer{m: m, base: s.base, scheme: s.scheme, host: s.host})
	return m.viaSessions.Load()
}
