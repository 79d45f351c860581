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
// them. Safe for concurrent use.
type Manager struct {
	origin, clientID, redirectURI, redirectTarget string
	scopes                                        []scope.Scope
	o                                             options
	storage, pendingStorage                       Storage
	lock                                          Lock
	intents                                       bool
	http                                          *http.Client
	log                                           *slog.Logger
	tokensKey, pendingKey, intentKey, lockName    string
	arms                                          bool // the default clock: the bearer layer may arm a token (armed.go)
	afterFunc                                     func(time.Duration, func()) (stop func() bool)
	monotonic                                     func() time.Time // time.Now, read for its monotonic clock (tests inject theirs)

	// armed is the token the bearer layer sends without a clock read (armed.go); stored and swapped
	// with mu held, loaded without it.
	armed atomic.Pointer[armedToken]

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
}

type flight struct {
	done  chan struct{}
	token string
	err   error
}

// New makes a Manager. It fails with INVALID_OPTIONS, saying why.
func New(config Config, opts ...Option) (*Manager, error) {
	o := options{
		leeway: 60 * time.Second, pendingLifetime: 10 * time.Minute,
		requestTimeout: 10 * time.Second, attempts: 3, retryDelay: 300 * time.Millisecond, intentWait: 20 * time.Second,
	}
	if err := applyOptions(&o, opts); err != nil {
		return nil, err
	}
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
	if o.attempts < 1 || o.leeway < 0 || o.pendingLifetime <= 0 || o.requestTimeout <= 0 || o.retryDelay < 0 || o.intentWait <= 0 {
		return nil, invalidOption("options", "attempts must be >= 1 and durations positive")
	}
	m := &Manager{origin: origin, clientID: config.ClientID, redirectURI: config.RedirectURI,
		redirectTarget: normalTarget(redirect, true), scopes: append([]scope.Scope(nil), config.Scopes...), o: o,
		afterFunc: afterFuncOnTimer, monotonic: time.Now}
	if m.o.now == nil {
		m.o.now, m.arms = time.Now, true
	}
	m.storage = o.storage
	if m.storage == nil {
		m.storage = NewMemoryStorage()
	}
	m.pendingStorage = o.pendingStorage
	if m.pendingStorage == nil {
		m.pendingStorage = m.storage
	}
	// The lock option wins, then the storage's own lock, then the process's. Intents only where
	// processes share the storage through a lock.
	m.lock = o.lock
	if m.lock == nil {
		if locking, ok := m.storage.(LockingStorage); ok {
			m.lock = locking.Lock()
		}
	}
	_, memory := m.storage.(*MemoryStorage)
	m.intents = m.lock != nil && !memory
	if m.lock == nil {
		m.lock = processLocks
	}
	base := o.client
	if base == nil {
		base = &http.Client{}
	}
	client := *base
	client.Timeout = 0 // the running-time timeout bounds each request instead
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	m.http = &client
	m.log = o.logger
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	prefix := "tenant-integration:" + origin + ":" + config.ClientID + ":"
	m.tokensKey, m.pendingKey, m.intentKey, m.lockName = prefix+"tokens", prefix+"pending", prefix+"intent", prefix+"lock"
	return m, nil
}

// BaseURL is the tenant's origin, normalized ("" for a Manager not made by New).
func (m *Manager) BaseURL() string {
	if m == nil {
		return ""
	}
	return m.origin
}

// RedirectURI is the redirect URI of the Config, as given (the loopback sign-in listens on it).
func (m *Manager) RedirectURI() string {
	if m == nil {
		return ""
	}
	return m.redirectURI
}

// made is nil for a Manager made by New, else INVALID_OPTIONS: every method of a zero-value or nil
// *Manager returns it instead of panicking (in a goroutine of the kit's, it would end the process).
func (m *Manager) made() error {
	if m == nil || m.o.now == nil {
		return newError(CodeInvalidOptions, "this Manager was not made by tokenmanager.New (a zero value, or nil): make it with tokenmanager.New")
	}
	return nil
}

func (m *Manager) nowMs() float64 { return float64(m.o.now().UnixNano()) / 1e6 }

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
	var own *Error
	if errors.As(err, &own) && (own.Code == CodeLockTimeout || own.Code == CodeStorageFailed) && own == err {
		return own
	}
	return &Error{Code: CodeStorageFailed, Message: "the token storage failed", Err: scrub(err, m.known(secrets...))}
}

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
