package tenanttest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
	"github.com/tenant-integration/sdk/packages/go/transport"
)

// Tenant is a token manager signed in to the sandbox and an *http.Client on it (the manager's
// Transport under the transport layers), both on the sandbox's clock.
type Tenant struct {
	Sandbox *Sandbox
	Manager *tokenmanager.Manager
	// Client sends the bearer token to the sandbox, refreshes after a 401 (the sandbox's answer to an
	// expired token; the service description shows none) and retries like any
	// client of the kit (transport.New over Manager.Transport).
	Client      *http.Client
	ClientID    string
	RedirectURI string
	// Since is the sandbox's last event when the tenant was made: RefreshCount counts after it.
	Since int
}

// TenantOption sets an optional behaviour of NewTenant and New.
type TenantOption func(*tenantOptions)

type tenantOptions struct {
	scopes    []scope.Scope
	clientID  string
	signIn    bool
	manager   []tokenmanager.Option
	transport []transport.Option
	sandbox   []SandboxOption
}

// WithScopes sets the scopes the manager asks for (default scope.ProfileRead).
func WithScopes(scopes ...scope.Scope) TenantOption {
	return func(o *tenantOptions) { o.scopes = scopes }
}

// WithClientID picks which of the sandbox's clients to be (default its first).
func WithClientID(id string) TenantOption { return func(o *tenantOptions) { o.clientID = id } }

// WithoutSignIn leaves the manager signed out; call SignIn.
func WithoutSignIn() TenantOption { return func(o *tenantOptions) { o.signIn = false } }

// WithManagerOptions adds options of the manager (WithStorage, WithLogger…); the clock is the
// sandbox's.
func WithManagerOptions(opts ...tokenmanager.Option) TenantOption {
	return func(o *tenantOptions) { o.manager = append(o.manager, opts...) }
}

// WithTransportOptions adds options of the client's transport layers (WithRetries, WithLogger…).
func WithTransportOptions(opts ...transport.Option) TenantOption {
	return func(o *tenantOptions) { o.transport = append(o.transport, opts...) }
}

// WithSandboxOptions sets the options of the sandbox New starts.
func WithSandboxOptions(opts ...SandboxOption) TenantOption {
	return func(o *tenantOptions) { o.sandbox = append(o.sandbox, opts...) }
}

// NewTenant makes a Tenant on a running sandbox: a manager with the sandbox's clock signed in
// through its auto-approve (unless WithoutSignIn), and a client on it.
// Errors: SANDBOX_FAILED (the client id is not registered, the sandbox does not answer),
// SIGN_IN_FAILED, and the manager's (INVALID_OPTIONS…). See RFC 6749 §4.1; RFC 7636.
func NewTenant(ctx context.Context, s *Sandbox, opts ...TenantOption) (*Tenant, error) {
	o := tenantOptions{scopes: []scope.Scope{scope.ProfileRead}, signIn: true}
	for i, opt := range opts {
		if opt == nil {
			return nil, invalidOption(i)
		}
		opt(&o)
	}
	var registered *Client
	for i, c := range s.Clients {
		if o.clientID == "" || c.ID == o.clientID {
			registered = &s.Clients[i]
			break
		}
	}
	if registered == nil || len(registered.RedirectURIs) == 0 {
		return nil, sandboxFailed(nil, "client %q is not registered in the sandbox (WithClients)", o.clientID)
	}
	since, err := s.LastSeq()
	if err != nil {
		return nil, err
	}
	manager, err := tokenmanager.New(tokenmanager.Config{BaseURL: s.URL, ClientID: registered.ID,
		RedirectURI: registered.RedirectURIs[0], Scopes: o.scopes}, append(o.manager, tokenmanager.WithClock(s.Now))...)
	if err != nil {
		return nil, err
	}
	rt, err := transport.New(manager.Transport(nil), o.transport...)
	if err != nil {
		return nil, err
	}
	t := &Tenant{Sandbox: s, Manager: manager, Client: &http.Client{Transport: rt}, ClientID: registered.ID,
		RedirectURI: registered.RedirectURIs[0], Since: since}
	if o.signIn {
		if _, err := t.SignIn(ctx); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// SignIn signs the manager in through the sandbox's auto-approve: BeginAuthorization, the
// authorize URL answered with a 302 to the callback, CompleteAuthorization.
// Errors: SIGN_IN_FAILED, and CompleteAuthorization's.
func (t *Tenant) SignIn(ctx context.Context) (tokenmanager.SessionInfo, error) {
	request, err := t.Manager.BeginAuthorization(ctx)
	if err != nil {
		return tokenmanager.SessionInfo{}, err
	}
	callback, err := Approve(ctx, request.URL)
	if err != nil {
		return tokenmanager.SessionInfo{}, err
	}
	return t.Manager.CompleteAuthorization(ctx, callback)
}

// URL is the sandbox's URL of path, e.g. tenant.URL("/api/v1/auth/user").
func (t *Tenant) URL(path string) string { return t.Sandbox.URL + path }

// RefreshCount is how many refreshes succeeded since the tenant was made.
func (t *Tenant) RefreshCount() (int, error) { return t.Sandbox.RefreshCount(t.Since) }

// ---- for go test -------------------------------------------------------------------------------

// Start starts a sandbox for the test and stops it when the test ends; t.Fatal when it cannot. With
// -short the test is skipped (the fast inner loop starts no process).
func Start(t testing.TB, opts ...SandboxOption) *Sandbox {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the sandbox is a real process")
	}
	s, err := StartSandbox(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// New starts a sandbox for the test (WithSandboxOptions) and returns a Tenant on it, signed in;
// everything is stopped when the test ends. t.Fatal when it cannot; skipped with -short.
func New(t testing.TB, opts ...TenantOption) *Tenant {
	t.Helper()
	var o tenantOptions
	for i, opt := range opts {
		if opt == nil {
			t.Fatal(invalidOption(i))
		}
		opt(&o)
	}
	s := Start(t, o.sandbox...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tenant, err := NewTenant(ctx, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tenant
}

// Advance moves the sandbox's clock forward by d; t.Fatal when it cannot.
func (t *Tenant) Advance(tb testing.TB, d time.Duration) {
	tb.Helper()
	if err := t.Sandbox.Advance(d); err != nil {
		tb.Fatal(err)
	}
}
