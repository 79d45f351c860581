// Package tenanttest runs the sandbox tenant as a process for tests and hands out a signed-in token
// manager and client on its clock in one call, as createTestTenant does for TypeScript
// (@tenant-integration/sandbox/testing) and the tenant fixture for pytest.
//
// The sandbox (tenant-sandbox, the npm package @tenant-integration/sandbox) is a local tenant of the
// service that rotates refresh tokens like the real one. StartSandbox starts it on a free loopback
// port with auto-approve (the authorization request is answered at once with the redirect, no
// browser) and its test clock (Advance moves time forward). Which command starts it, first match
// wins: WithCommand; the environment variable TENANT_SANDBOX_COMMAND (e.g. "node
// /path/to/sandbox/dist/cli.js"); node_modules/.bin/tenant-sandbox in the current directory or one
// above it (npm install --save-dev @tenant-integration/sandbox); tenant-sandbox on the PATH.
// Node.js 20 or newer must be installed. From a checkout of the SDK's repository: pnpm install &&
// pnpm --filter @tenant-integration/sandbox build, then TENANT_SANDBOX_COMMAND="node
// <checkout>/packages/sandbox/dist/cli.js". A process that did not start the sandbox follows its
// clock with FollowClock. Nothing here is for production: the sandbox approves every sign-in and
// its clock can be moved.
//
//	func TestUser(t *testing.T) {
//		tenant := tenanttest.New(t)                      // a sandbox, signed in, stopped after the test
//		tenant.Advance(t, 16*time.Minute)                // past the 15-minute access token
//		response, err := tenant.Client.Get(tenant.URL("/api/v1/auth/user")) // refreshed first
//		...
//	}
package tenanttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/errtext"
)

// SandboxCommandEnv names the environment variable holding the command that starts the sandbox
// (split on spaces).
const SandboxCommandEnv = "TENANT_SANDBOX_COMMAND"

// DefaultClientID is the OAuth client a sandbox registers when given none.
const DefaultClientID = "test-integration"

// DefaultRedirectURI is its redirect URI; nothing needs to listen there: the sandbox's redirect is
// read, never followed.
const DefaultRedirectURI = "http://127.0.0.1:53682/callback"

// Error codes of this package, the Python kit's (tenant_integration.testing).
const (
	CodeSandboxFailed = "SANDBOX_FAILED"
	CodeSignInFailed  = "SIGN_IN_FAILED"
)

// Error is a sandbox that could not be started or did not answer (SANDBOX_FAILED), or a sign-in it
// did not approve (SIGN_IN_FAILED). It never holds a token.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error is "CODE: message: cause", the cause's text included, so that a printed error says why.
func (e *Error) Error() string { return errtext.Text(e.Code, e.Message, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code.
func (e *Error) ErrorCode() string { return e.Code }

// invalidOption is the error of a nil option (the tokenmanager's code, INVALID_OPTIONS).
func invalidOption(index int) *Error {
	return &Error{Code: "INVALID_OPTIONS", Message: fmt.Sprintf("option %d is nil", index+1)}
}

func sandboxFailed(cause error, format string, args ...any) *Error {
	return &Error{Code: CodeSandboxFailed, Message: fmt.Sprintf(format, args...), Err: cause}
}

// Client is an OAuth client the sandbox registers at start (--client id=…,redirect=…).
type Client struct {
	// ID is the client_id.
	ID string
	// RedirectURIs are matched exactly; none may hold a comma or "|".
	RedirectURIs []string
	// Scopes it may ask for; nil for any scope of the contract.
	Scopes []string
}

func (c Client) spec() string {
	parts := []string{"id=" + c.ID, "redirect=" + strings.Join(c.RedirectURIs, "|")}
	if c.Scopes != nil {
		parts = append(parts, "scopes="+strings.Join(c.Scopes, "|"))
	}
	return strings.Join(parts, ",")
}

// SandboxOption sets an optional behaviour of StartSandbox.
type SandboxOption func(*sandboxOptions)

type sandboxOptions struct {
	clients []Client
	command []string
	args    []string
	startup time.Duration
}

// WithClients sets the OAuth clients to register (default: DefaultClientID with DefaultRedirectURI,
// any scope).
func WithClients(clients ...Client) SandboxOption {
	return func(o *sandboxOptions) { o.clients = clients }
}

// WithCommand sets the command that starts the sandbox, e.g. "node", "/path/to/sandbox/dist/cli.js".
func WithCommand(argv ...string) SandboxOption { return func(o *sandboxOptions) { o.command = argv } }

// WithArgs adds options of tenant-sandbox, e.g. "--rotation-grace", "30".
func WithArgs(args ...string) SandboxOption {
	return func(o *sandboxOptions) { o.args = append(o.args, args...) }
}

// WithStartupTimeout bounds the wait for the sandbox's first line (default 30 s).
func WithStartupTimeout(d time.Duration) SandboxOption {
	return func(o *sandboxOptions) { o.startup = d }
}

// Command is the command that starts the sandbox, without its options (see the package doc).
// Errors: SANDBOX_FAILED when none is found; the message says how to provide one.
func Command() ([]string, error) {
	if fromEnv := strings.Fields(os.Getenv(SandboxCommandEnv)); len(fromEnv) > 0 {
		return fromEnv, nil
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			candidate := filepath.Join(dir, "node_modules", ".bin", "tenant-sandbox")
			if info, err := os.Stat(candidate); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
				return []string{candidate}, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if onPath, err := exec.LookPath("tenant-sandbox"); err == nil {
		return []string{onPath}, nil
	}
	return nil, sandboxFailed(nil, "cannot find the sandbox (tenant-sandbox, Node.js 20 or newer). From a checkout of the SDK's "+
		"repository (https://github.com/tenant-integration/sdk): run `pnpm install && pnpm --filter @tenant-integration/sandbox build` there, "+
		"then set %s='node <checkout>/packages/sandbox/dist/cli.js'. Where the npm package @tenant-integration/sandbox is available, "+
		"`npm install --save-dev @tenant-integration/sandbox` here puts node_modules/.bin/tenant-sandbox where it is found", SandboxCommandEnv)
}

// Sandbox is the sandbox tenant running as a child process on a free loopback port, with
// auto-approve and the test clock. Safe for concurrent use.
type Sandbox struct {
	// URL is its base URL, e.g. http://127.0.0.1:41237: the token manager's BaseURL.
	URL string
	// Clients are the OAuth clients it registered.
	Clients []Client

	cmd    *exec.Cmd
	exited chan struct{}
	http   *http.Client
	mu     sync.Mutex
	offset time.Duration
	stderr tail
	once   sync.Once
}

// tail keeps the end of the sandbox's standard error, for messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if text := strings.TrimSpace(string(t.buf)); text != "" {
		return ": " + text
	}
	return ""
}

// StartSandbox starts the sandbox: tenant-sandbox --port 0 --auto-approve --test-clock --json
// --client …, and reads the JSON line it prints to learn its URL. Close stops it.
// Errors: SANDBOX_FAILED when no command is found, or the process exits or stays silent before it
// listens.
func StartSandbox(opts ...SandboxOption) (*Sandbox, error) {
	o := sandboxOptions{clients: []Client{{ID: DefaultClientID, RedirectURIs: []string{DefaultRedirectURI}}}, startup: 30 * time.Second}
	for i, opt := range opts {
		if opt == nil {
			return nil, invalidOption(i)
		}
		opt(&o)
	}
	command := o.command
	if len(command) == 0 {
		var err error
		if command, err = Command(); err != nil {
			return nil, err
		}
	}
	argv := append(append([]string{}, command[1:]...), "--port", "0", "--auto-approve", "--test-clock", "--json")
	argv = append(argv, o.args...)
	for _, c := range o.clients {
		argv = append(argv, "--client", c.spec())
	}
	s := &Sandbox{Clients: o.clients, exited: make(chan struct{}), http: &http.Client{Timeout: 10 * time.Second}}
	s.cmd = exec.Command(command[0], argv...)
	s.cmd.Stderr = &s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, sandboxFailed(err, "cannot start the sandbox (%s)", command[0])
	}
	if err := s.cmd.Start(); err != nil {
		return nil, sandboxFailed(err, "cannot start the sandbox (%s)", command[0])
	}
	lines := make(chan string, 1)
	go func() {
		reader := bufio.NewReader(stdout)
		line, err := reader.ReadString('\n')
		if err != nil {
			close(lines)
		} else {
			lines <- line
		}
		_, _ = io.Copy(io.Discard, reader)
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	var first string
	select {
	case line, ok := <-lines:
		if !ok {
			<-s.exited
			return nil, sandboxFailed(nil, "the sandbox exited (%s)%s", s.cmd.ProcessState, s.stderr.String())
		}
		first = line
	case <-time.After(o.startup):
		s.stop()
		return nil, sandboxFailed(nil, "the sandbox printed nothing in %s%s", o.startup, s.stderr.String())
	}
	var info struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(first), &info); err != nil || info.URL == "" {
		s.stop()
		return nil, sandboxFailed(err, "the sandbox's first line is not its JSON start line: %.200q", first)
	}
	s.URL = info.URL
	if err := s.SyncClock(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// Pid is the sandbox's process id.
func (s *Sandbox) Pid() int { return s.cmd.Process.Pid }

// Close stops the sandbox (SIGTERM, then SIGKILL after 5 s) and waits for it; safe to call twice.
func (s *Sandbox) Close() error {
	s.stop()
	return nil
}

func (s *Sandbox) stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

func (s *Sandbox) call(method, path string, body any, into any) error {
	var reader io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		reader = bytes.NewReader(raw)
	}
	request, err := http.NewRequest(method, s.URL+path, reader)
	if err != nil {
		return sandboxFailed(err, "%s %s", method, path)
	}
	request.Header.Set("Content-Type", "application/json")
	response, err := s.http.Do(request)
	if err != nil {
		return sandboxFailed(err, "%s %s: %v%s", method, path, err, s.stderr.String())
	}
	defer response.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(response.Body, 1<<20))
	if response.StatusCode >= 400 {
		return sandboxFailed(nil, "%s %s answered %d: %.300s", method, path, response.StatusCode, raw)
	}
	if into != nil {
		if err := json.Unmarshal(raw, into); err != nil {
			return sandboxFailed(err, "%s %s answered no JSON", method, path)
		}
	}
	return nil
}

// Now is the sandbox's clock as seen from here: the wall clock plus its offset. Give it to every
// token manager under test (tokenmanager.WithClock(sandbox.Now)).
func (s *Sandbox) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Add(s.offset)
}

func (s *Sandbox) setOffset(seconds float64) {
	s.mu.Lock()
	s.offset = time.Duration(seconds * float64(time.Second))
	s.mu.Unlock()
}

// SyncClock reads the sandbox's clock offset (another process may have moved it).
func (s *Sandbox) SyncClock() error {
	var body struct {
		OffsetSeconds float64 `json:"offsetSeconds"`
	}
	if err := s.call(http.MethodGet, "/__sandbox/clock", nil, &body); err != nil {
		return err
	}
	s.setOffset(body.OffsetSeconds)
	return nil
}

// Advance moves the sandbox's clock forward by d, and Now with it.
// Errors: SANDBOX_FAILED (a negative d, or the sandbox refused).
func (s *Sandbox) Advance(d time.Duration) error {
	if d < 0 {
		return sandboxFailed(nil, "the clock moves forward only, not by %s", d)
	}
	var body struct {
		OffsetSeconds float64 `json:"offsetSeconds"`
	}
	if err := s.call(http.MethodPost, "/__sandbox/clock", map[string]any{"advanceSeconds": d.Seconds()}, &body); err != nil {
		return err
	}
	s.setOffset(body.OffsetSeconds)
	return nil
}

// Event is one call of POST /oauth/token or /oauth/revoke as the sandbox logged it (no token).
type Event struct {
	Seq       int     `json:"seq"`
	Time      string  `json:"time"`
	Endpoint  string  `json:"endpoint"`
	GrantType *string `json:"grantType"`
	ClientID  *string `json:"clientId"`
	Status    int     `json:"status"`
	Outcome   string  `json:"outcome"`
	Detail    *string `json:"detail"`
	// User is the id of the sandbox user whose grant the call was about (a number or a string, as
	// the sandbox's user records have it), nil when none.
	User any `json:"user"`
}

// Ledger is the sandbox's refresh-token ledger (GET /__sandbox/ledger): which refresh token was
// presented when, by whom and with what outcome, named by fingerprint (SHA-256), never by value.
type Ledger struct {
	RefreshTokens []struct {
		Fingerprint   string  `json:"fingerprint"`
		Family        *string `json:"family"`
		Presentations []struct {
			Seq     int     `json:"seq"`
			Actor   *string `json:"actor"`
			Outcome string  `json:"outcome"`
			Detail  *string `json:"detail"`
		} `json:"presentations"`
	} `json:"refreshTokens"`
	// Reuses are the presentations of a rotated-away refresh token that revoked its family.
	Reuses []struct {
		Fingerprint string  `json:"fingerprint"`
		Family      *string `json:"family"`
		Actor       *string `json:"actor"`
	} `json:"reuses"`
	// Families are the sign-ins, each with its user (who approved it).
	Families []struct {
		ID        string  `json:"id"`
		User      any     `json:"user"`
		Revoked   bool    `json:"revoked"`
		RevokedBy *string `json:"revokedBy"`
	} `json:"families"`
}

// Ledger reads the refresh-token ledger: the tenant's side of a test of rotation (RFC 9700
// §4.14.2). Errors: SANDBOX_FAILED.
func (s *Sandbox) Ledger() (*Ledger, error) {
	var ledger Ledger
	if err := s.call(http.MethodGet, "/__sandbox/ledger", nil, &ledger); err != nil {
		return nil, err
	}
	return &ledger, nil
}

// Events are the sandbox's token and revoke events with a Seq above after, oldest first.
func (s *Sandbox) Events(after int) ([]Event, error) {
	var body struct {
		Events []Event `json:"events"`
	}
	if err := s.call(http.MethodGet, "/__sandbox/events", nil, &body); err != nil {
		return nil, err
	}
	var out []Event
	for _, e := range body.Events {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out, nil
}

// LastSeq is the Seq of the latest event (0 when none): pass it as after to see only what follows.
func (s *Sandbox) LastSeq() (int, error) {
	events, err := s.Events(0)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	return events[len(events)-1].Seq, nil
}

// RefreshCount is how many refresh grants succeeded (HTTP 200) after event after. See RFC 6749 §6.
func (s *Sandbox) RefreshCount(after int) (int, error) {
	events, err := s.Events(after)
	count := 0
	for _, e := range events {
		if e.GrantType != nil && *e.GrantType == "refresh_token" && e.Status == 200 {
			count++
		}
	}
	return count, err
}

// Approve plays the browser at the authorize URL: the sandbox auto-approves with a 302 whose
// Location is the callback, returned (pass it to CompleteAuthorization).
// Errors: SIGN_IN_FAILED when the sandbox does not approve (the message says why, never a code).
func Approve(ctx context.Context, authorizeURL string) (string, error) {
	browser := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizeURL, nil)
	if err != nil {
		return "", &Error{Code: CodeSignInFailed, Message: "not an authorize URL"} // the parser's text quotes the URL and its state
	}
	response, err := browser.Do(request)
	if err != nil {
		return "", &Error{Code: CodeSignInFailed, Message: "the sandbox did not answer the authorization request", Err: errors.Unwrap(err)}
	}
	defer response.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(response.Body, 4096))
	callback, err := response.Location()
	if response.StatusCode != http.StatusFound || err != nil || callback.Query().Get("code") == "" {
		reason := strings.TrimSpace(string(raw))
		if callback != nil {
			if description := callback.Query().Get("error_description") + " " + callback.Query().Get("error"); strings.TrimSpace(description) != "" {
				reason = strings.TrimSpace(description)
			}
		}
		return "", &Error{Code: CodeSignInFailed, Message: fmt.Sprintf("the sandbox did not approve the sign-in (HTTP %d): %.300s", response.StatusCode, reason)}
	}
	return callback.String(), nil
}
