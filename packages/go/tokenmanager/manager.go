package tokenmanager

// The Manager: its type, New and the state its calls share (the TypeScript kit's manager-state.ts,
// the Python kit's _manager_core.py).

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

// Manager signs in, keeps the tokens in a storage, refreshes them rotation-safely and revokes
// them. Safe for concurrent use. Without a session id (WithSessionID) it keeps the one session of
// its storage; a server acting for many users gets one per user from a Sessions (sessions.go).
type Manager struct {
	*settings // shared by every manager of a Sessions

	session                        string       // the session id, "" without one
	log                            *slog.Logger // the settings' logger; with a session id, its lines carry it at debug level
	tokensKey, intentKey, lockName string

	// armed is the token the bearer layer sends without a clock read (armed.go); stored and swapped
	// with mu held, loaded without it.
	armed atomic.Pointer[armedToken]
	// inUse counts the calls under way (and a refresh, which outlives its callers); lastUsed is when
	// the last one began (monotonic ns since the settings were made). A Sessions drops only a manager
	// that is not in use and has been idle (sessions.go).
	inUse    atomic.Int32
	lastUsed atomic.Int64
	// viaSessions is the bearer layer of Sessions.Transport, made at its first request.
	viaSessions atomic.Pointer[bearer]

	mu              sync.Mutex   // guards what follows; never held across I/O
	current         *tokenRecord // set through setCurrent, which disarms the armed token
	unsaved         *tokenRecord
	rejected        string
	generation      int
	flight          *flight
	ownIntent       *intentRecord
	watch           *intentWatch // this process's watch of another's refresh intent (refreshintent.go)
	foreignIntent   string       // the last value under the intent key that was no intent record (warned about once)
	writeFailure    *Error
	retryWriteAfter float64
	rewriting       bool // a retry of the unsaved tokens' write is scheduled (retryWriteLater)
	closed          bool // Close was called: no beat starts, no write is retried in the background
}

// settings are what every manager of one tenant and client shares: the configuration, the options,
// the storages, the lock and the HTTP client. A Manager made by New has its own; a Sessions makes one
// for all of its managers, so that a cached session costs only its own state.
type settings struct {
	origin, clientID, redirectURI, redirectTarget string
	scopes                                        []scope.Scope
	o                                             options
	storage, pendingStorage                       Storage
	lock                                          Lock
	intents                                       bool
	http                                          *http.Client
	log                                           *slog.Logger
	arms                                          bool // the default clock: the bearer layer may arm a token (armed.go)
	afterFunc                                     func(time.Duration, func()) (stop func() bool)
	monotonic                                     func() time.Time // time.Now, read for its monotonic clock (tests inject theirs)
	started                                       time.Time        // monotonic origin of Manager.lastUsed
	pending                                       pendingStorage   // where pending sign-ins live, by state (pending.go)
}

type flight struct {
	done  chan struct{}
	token string
	err   error
}

// New makes a Manager. It fails with INVALID_OPTIONS, saying why, and with INVALID_SESSION_ID for a
// session id (WithSessionID) outside the rule (CheckSessionID).
func New(config Config, opts ...Option) (*Manager, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.maxCached != nil || o.maxIdle != nil {
		return nil, invalidOption("WithMaxCached, WithMaxIdle", "they are options of NewSessions, which drops idle managers; a Manager made by New is yours to keep")
	}
	if o.sessionID != nil {
		if err := CheckSessionID(*o.sessionID); err != nil {
			return nil, err
		}
	}
	s, err := newSettings(config, o, o.sessionID != nil)
	if err != nil {
		return nil, err
	}
	session := ""
	if o.sessionID != nil {
		session = *o.sessionID
	}
	return sessionManager(s, session), nil
}

// buildOptions applies opts over the defaults.
func buildOptions(opts []Option) (options, error) {
	o := options{
		leeway: 60 * time.Second, pendingLifetime: 10 * time.Minute,
		requestTimeout: 10 * time.Second, attempts: 3, retryDelay: 300 * time.Millisecond, intentWait: 20 * time.Second,
	}
	if err := applyOptions(&o, opts); err != nil {
		return o, err
	}
	if o.attempts < 1 || o.leeway < 0 || o.pendingLifetime <= 0 || o.requestTimeout <= 0 || o.retryDelay < 0 || o.intentWait <= 0 {
		return o, invalidOption("options", "attempts must be >= 1 and durations positive")
	}
	return o, nil
}

// newSettings checks the configuration and makes what its managers share. sessions says whether
// they have session ids: a storage with a lock per session (SessionLockingStorage) then gives that one.
func newSettings(config Config, o options, sessions bool) (*settings, error) {
	origin, err := tenantOrigin(config.BaseURL)
	if err != nil {
		return nil, err
	}
	if config.ClientID == "" {
		return nil, invalidOption("ClientID", "give the OAuth client identifier")
	}
	redirect, err := url.Parse(config.RedirectURI)
	if err != nil || !redirect.IsAbs() || redirect.Host == "" || redirect.Fragment != "" {
		return nil, invalidOption("RedirectURI", "give the absolute redirect URI registered for the client, without a fragment")
	}
	if err := checkScopes(config.Scopes); err != nil {
		return nil, err
	}
	s := &settings{origin: origin, clientID: config.ClientID, redirectURI: config.RedirectURI,
		redirectTarget: normalTarget(redirect, true), scopes: append([]scope.Scope(nil), config.Scopes...), o: o,
		afterFunc: afterFuncOnTimer, monotonic: time.Now, started: time.Now()}
	if s.o.now == nil {
		s.o.now, s.arms = time.Now, true
	}
	s.storage = o.storage
	if s.storage == nil {
		s.storage = NewMemoryStorage()
	}
	s.pendingStorage = o.pendingStorage
	if s.pendingStorage == nil {
		s.pendingStorage = s.storage
	}
	s.lock = chooseLock(o.lock, s.storage, sessions)
	_, memory := s.storage.(*MemoryStorage)
	s.intents = s.lock != nil && !memory
	if s.lock == nil {
		s.lock = processLocks
	}
	base := o.client
	if base == nil {
		base = &http.Client{}
	}
	client := *base
	client.Timeout = 0 // the running-time timeout bounds each request instead
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s.http = &client
	s.log = o.logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.pending = newPendingStorage(s.pendingStorage, s.log, origin, config.ClientID)
	return s, nil
}

// chooseLock: the lock option wins, then the storage's own lock (for managers with session ids, its
// lock per session when it has one), else nil: the process's. Intents are written only where
// processes share the storage through a lock.
func chooseLock(option Lock, storage Storage, sessions bool) Lock {
	if option != nil {
		return option
	}
	if perSession, ok := storage.(SessionLockingStorage); ok && sessions {
		return perSession.SessionLock()
	}
	if locking, ok := storage.(LockingStorage); ok {
		return locking.Lock()
	}
	return nil
}

// sessionManager makes the manager of one session (session "" for a manager without a session id).
func sessionManager(s *settings, session string) *Manager {
	m := &Manager{settings: s, session: session, log: s.log}
	names := scopeNames(s.origin, s.clientID, session)
	m.tokensKey, m.intentKey, m.lockName = names.tokens, names.intent, names.lock
	if session != "" && s.log.Handler() != slog.DiscardHandler {
		m.log = slog.New(withSessionID(s.log.Handler(), session))
	}
	return m
}

// SessionID is the manager's session id ("" without one).
func (m *Manager) SessionID() string {
	if m == nil {
		return ""
	}
	return m.session
}

// BaseURL is the tenant's origin, normalized ("" for a Manager not made by New).
func (m *Manager) BaseURL() string {
	if m == nil || m.settings == nil {
		return ""
	}
	return m.origin
}

// RedirectURI is the redirect URI of the Config, as given (the loopback sign-in listens on it).
func (m *Manager) RedirectURI() string {
	if m == nil || m.settings == nil {
		return ""
	}
	return m.redirectURI
}

// made is nil for a Manager made by New, else INVALID_OPTIONS: every method of a zero-value or nil
// *Manager returns it instead of panicking (in a goroutine of the kit's, it would end the process).
func (m *Manager) made() error {
	if m == nil || m.settings == nil {
		return newError(CodeInvalidOptions, "this Manager was not made by tokenmanager.New (a zero value, or nil): make it with tokenmanager.New")
	}
	return nil
}

func (s *settings) nowMs() float64 { return float64(s.o.now().UnixNano()) / 1e6 }

func (m *Manager) emit(e Event) {
	for _, hook := range m.o.onChange {
		hook(e)
	}
}

// known is every token in play, for scrubbing.
func (m *Manager) known(extra ...string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range []*tokenRecord{m.current, m.unsaved} {
		if r != nil {
			extra = append(extra, r.AccessToken, r.RefreshToken)
		}
	}
	return extra
}

func (m *Manager) storageFailed(err error, secrets ...string) *Error {
	return storageFailure(err, m.known(secrets...))
}

// storageFailure is STORAGE_FAILED with err as its cause, scrubbed of secrets (LOCK_TIMEOUT and
// STORAGE_FAILED as they are).
func storageFailure(err error, secrets []string) *Error {
	var own *Error
	if errors.As(err, &own) && (own.Code == CodeLockTimeout || own.Code == CodeStorageFailed) && own == err {
		return own
	}
	return &Error{Code: CodeStorageFailed, Message: "the token storage failed", Err: scrub(err, secrets)}
}

// enter marks the manager in use until leave (a call, a refresh): a Sessions never drops a manager
// in use. Both are atomic adds, no lock.
func (m *Manager) enter() {
	m.inUse.Add(1)
	m.touch()
}

func (m *Manager) leave() {
	m.touch()
	m.inUse.Add(-1)
}

// use is enter, and leave as the function to defer: defer m.use()().
func (m *Manager) use() func() {
	m.enter()
	return m.leave
}

// touch records that the manager was used now.
func (m *Manager) touch() { m.lastUsed.Store(int64(time.Since(m.started))) }

// storageCodes are the codes of the storages and their locks (filestorage, redisstorage): a call
// that meets one reports STORAGE_FAILED with it as the cause.
var storageCodes = map[Code]bool{CodeFileCorrupt: true, CodeFileUnsafe: true, CodeIOFailed: true,
	CodeCommandFailed: true, CodeUnexpectedReply: true, CodeReplicationTimeout: true, CodeLeaseLost: true,
	CodeLockUnavailable: true}

// lockFailed is what a call reports when the refresh lock, or the task run under it, failed: the
// manager's own errors and LOCK_TIMEOUT (it names the holder) as they are, and the end of the
// caller's context; every other failure of the storage or its lock (FILE_UNSAFE, IO_FAILED, a
// Redis error, a lock of the user's own) as STORAGE_FAILED with it as the cause, as a failed read or
// write is reported: the rule of every kit, whichever call met the fault.
func (m *Manager) lockFailed(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var own *Error
	if errors.As(err, &own) && own == err && !storageCodes[own.Code] {
		return err
	}
	return m.storageFailed(err)
}

// setAside: the storage found its data unreadable and set it aside (filestorage's FILE_CORRUPT):
// every key is absent now.
func setAside(err error) bool {
	var own *Error
	return errors.As(err, &own) && own.reset
}
