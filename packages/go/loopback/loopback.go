// Package loopback signs a command-line tool in: the browser comes back to a one-shot HTTP server on
// the loopback interface (RFC 8252 §7.3, §8.3).
//
// RFC 8252 lets a native client pick any port at run time; this service compares the redirect URI
// exactly with a registered one, so the port cannot vary: the server binds the port of the
// registered redirect URI, and a busy port is an error that names it (CALLBACK_PORT_IN_USE). Only
// the loopback interface is bound: nothing outside the machine can reach the server. The errors are
// the TypeScript and Python kits' (*tokenmanager.Error): CALLBACK_PORT_IN_USE (Port),
// REDIRECT_URI_REFUSED (Status), TRANSIENT (the tenant did not answer), CALLBACK_TIMEOUT,
// INVALID_OPTIONS.
//
//	session, err := loopback.SignIn(ctx, manager) // prints the URL to open; WithOpenBrowser to open it
package loopback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// DefaultTimeout is how long SignIn waits for the callback.
const DefaultTimeout = 5 * time.Minute

const (
	donePage   = "Signed in. You can close this window and return to the terminal."
	failedPage = "Sign-in failed: %s. Return to the terminal for details; you can close this window."
)

// Server is a one-shot HTTP server on the loopback port of a redirect URI, waiting for the
// authorization callback. The first GET of the redirect URI's path is the callback; every other
// request gets 404. The browser's request is held open until Respond says how the sign-in ended, so
// that its page tells the truth. Use it directly to drive the browser yourself, or through SignIn.
type Server struct {
	// RedirectURI is the bound redirect URI: character for character the one given (the registered
	// one), or, when it asks for port 0 (tests against a sandbox whose client is registered after the
	// server listens), with the port the system chose.
	RedirectURI string
	// Port is the bound port.
	Port int

	path, origin string
	listener     net.Listener
	server       *http.Server
	callbacks    chan string
	outcome      chan string // "" for success, else the reason shown to the browser
	answered     chan struct{}
	once         sync.Once
	taken        bool
	mu           sync.Mutex
}

func invalid(why string) error {
	return tokenmanager.NewError(tokenmanager.CodeInvalidOptions, "RedirectURI: "+why, nil)
}

// check parses a loopback redirect URI: the address to bind, the port and the path.
func check(redirectURI string) (bind string, port int, path string, err error) {
	u, parseErr := url.Parse(redirectURI)
	host := ""
	if parseErr == nil {
		host = strings.ToLower(u.Hostname())
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if parseErr == nil && u.Port() != "" {
		port, parseErr = strconv.Atoi(u.Port())
	}
	if parseErr != nil || u.Scheme != "http" || !loopback || u.Port() == "" || port < 0 || port > 65535 {
		return "", 0, "", invalid("a loopback sign-in needs http://127.0.0.1:<port>/<path> (or localhost, [::1]) with the port registered for the client (RFC 8252 §7.3)")
	}
	// localhost is served on 127.0.0.1 (RFC 8252 §8.3 recommends the address over the name).
	bind = host
	if host == "localhost" {
		bind = "127.0.0.1"
	}
	path = u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return bind, port, path, nil
}

// Listen starts a Server on the host and port of redirectURI (http to a loopback address with a
// port; port 0 lets the system choose, for tests).
// Errors: INVALID_OPTIONS (not such a URI, or a port this user may not bind); CALLBACK_PORT_IN_USE
// (with Port) when another program listens on the port.
func Listen(redirectURI string) (*Server, error) {
	bind, port, path, err := check(redirectURI)
	if err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(port)))
	if err != nil {
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			failure := tokenmanager.NewError(tokenmanager.CodeCallbackPortInUse, fmt.Sprintf(
				"port %d of %s is in use by another program (an earlier sign-in still waiting?). The sign-in must come back to exactly %s, "+
					"the redirect URI registered with the tenant: stop that program rather than choosing another port", port, bind, redirectURI), err)
			failure.Port = port
			return nil, failure
		case errors.Is(err, syscall.EACCES):
			return nil, invalid(fmt.Sprintf("this user may not listen on port %d (below 1024 needs privileges)", port))
		}
		return nil, tokenmanager.NewError(tokenmanager.CodeInvalidCallback, fmt.Sprintf("cannot listen on %s port %d", bind, port), err)
	}
	s := &Server{RedirectURI: redirectURI, path: path, listener: listener, callbacks: make(chan string, 1),
		outcome: make(chan string, 1), answered: make(chan struct{})}
	s.Port = listener.Addr().(*net.TCPAddr).Port
	if port == 0 {
		u, _ := url.Parse(redirectURI)
		u.Host = net.JoinHostPort(bind, strconv.Itoa(s.Port))
		s.RedirectURI = u.String()
	}
	// The callback's URL is the redirect URI's origin with the request's path and query: the Host
	// header is not trusted (another page may send any).
	u, _ := url.Parse(s.RedirectURI)
	s.origin = u.Scheme + "://" + u.Host
	// Silent: the server's own error log would print to the user's terminal.
	s.server = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = s.server.Serve(listener) }()
	return s, nil
}

func (s *Server) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken {
		return false
	}
	s.taken = true
	return true
}

// CalledBack reports whether the callback has arrived.
func (s *Server) CalledBack() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.EscapedPath() != s.path || !s.take() {
		http.NotFound(w, r)
		return
	}
	s.callbacks <- s.origin + r.URL.RequestURI()
	defer close(s.answered)
	var failure string
	select {
	case failure = <-s.outcome:
	case <-time.After(2 * time.Minute):
		failure = "no outcome"
	case <-r.Context().Done():
		return // the browser left before its page: nothing to tell it
	}
	page, status := donePage, http.StatusOK
	if failure != "" {
		page, status = fmt.Sprintf(failedPage, failure), http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, page)
}

// CheckRedirect asks the tenant, before the browser goes there, whether it would send the browser
// back here: a GET of the authorize endpoint with only the request's client_id and redirect_uri (no
// state, no challenge: nothing can be approved). Assumption (not in the service description): that
// the tenant checks those two before it redirects anywhere and shows an error page when either is
// not registered (RFC 6749 §4.1.2.1; the description says only that such a request "is not valid").
// So a 4xx page (but 404, 408, 429) means the redirect URI or the client id is not registered, and
// the sign-in fails at once instead of waiting for a callback that cannot come. A tenant that gives
// no answer at all (no connection, a DNS failure, no answer within 10 s) cannot complete the
// sign-in either: that fails at once too. A redirect, a login page or a 5xx tell nothing: nil.
// client nil: a plain client.
// Errors: REDIRECT_URI_REFUSED (with Status); TRANSIENT (no answer; the cause says why). See RFC
// 6749 §3.1.2.4, §4.1.2.1.
func (s *Server) CheckRedirect(ctx context.Context, authorizeURL string, client *http.Client) error {
	asked, err := url.Parse(authorizeURL)
	if err != nil {
		return nil
	}
	query := asked.Query()
	clientID, redirectURI := query.Get("client_id"), query.Get("redirect_uri")
	probe := url.URL{Scheme: asked.Scheme, Host: asked.Host, Path: asked.Path,
		RawQuery: url.Values{"client_id": {clientID}, "redirect_uri": {redirectURI}}.Encode()}
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, probe.String(), nil)
	if err != nil {
		return nil
	}
	request.Header.Set("Accept", "text/html")
	plain := http.Client{Timeout: 10 * time.Second}
	if client != nil {
		plain = *client
	}
	plain.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	response, err := plain.Do(request)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return unreachable(asked, err)
	}
	_ = response.Body.Close()
	status := response.StatusCode
	if status < 400 || status > 499 || status == 404 || status == 408 || status == 429 {
		return nil
	}
	failure := tokenmanager.NewError(tokenmanager.CodeRedirectURIRefused, fmt.Sprintf(
		"the tenant answered the authorize request with an error page (HTTP %d) instead of redirecting to %s: check that this redirect URI "+
			"is registered for client %s exactly as written (scheme, host, port %d and path), and the client id", status, redirectURI, clientID, s.Port), nil)
	failure.Status = status
	return failure
}

// unreachable is the TRANSIENT error of a tenant that did not answer the authorize request: the
// browser would not reach it either, so no callback can come. The cause is the network's error
// (without the request's URL, which http.Client puts around it).
func unreachable(authorize *url.URL, err error) error {
	var wrapped *url.Error
	if errors.As(err, &wrapped) {
		err = wrapped.Err
	}
	failure := tokenmanager.NewError(tokenmanager.CodeTransient, fmt.Sprintf(
		"the tenant at %s://%s did not answer the authorize request, so the browser cannot sign in there either: check the tenant's "+
			"address and the network, then sign in again", authorize.Scheme, authorize.Host), err)
	failure.Attempts = 1
	return failure
}

// Wait waits for the callback and returns its full URL (pass it to CompleteAuthorization).
// Errors: CALLBACK_TIMEOUT after timeout (the message says what to check at the tenant); ctx.Err()
// when ctx ends first. See RFC 8252 §7.3.
func (s *Server) Wait(ctx context.Context, timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case callback := <-s.callbacks:
		return callback, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-timer.C:
		return "", tokenmanager.NewError(tokenmanager.CodeCallbackTimeout, fmt.Sprintf(
			"no authorization callback arrived at %s within %s. If the browser shows an error page at the tenant instead, check that the client_id "+
				"is registered there with exactly this redirect URI (port %d and path included) and that it may ask for the scopes requested",
			s.RedirectURI, timeout, s.Port), nil)
	}
}

// Respond ends the browser's request: the success page (failure "") or the failure page naming
// failure (a reason that holds no secret, e.g. an error code).
func (s *Server) Respond(failure string) {
	select {
	case s.outcome <- failure:
	default:
	}
	if s.CalledBack() {
		select {
		case <-s.answered:
		case <-time.After(5 * time.Second):
		}
	}
}

// Close stops the server and frees the port; safe to call twice.
func (s *Server) Close() error {
	s.once.Do(func() {
		select {
		case s.outcome <- "the sign-in was stopped":
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.server.Shutdown(ctx)
	})
	return nil
}

// Option sets an optional behaviour of SignIn.
type Option func(*options)

type options struct {
	open    func(url string) error
	timeout time.Duration
	client  *http.Client
	out     io.Writer
}

// WithOpenBrowser sets how the authorize URL is shown: e.g. a func that runs xdg-open or open; an
// error makes SignIn print the URL instead. It runs in a goroutine of its own, so it may make the
// whole round trip itself before it returns (a test, a headless browser). Default: print the URL.
func WithOpenBrowser(open func(url string) error) Option { return func(o *options) { o.open = open } }

// WithTimeout sets how long to wait for the callback (default 5 min).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithHTTPClient sets the client of CheckRedirect (default: a plain client).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithOutput sets where the URL is printed when no browser opens (default os.Stderr: the user's
// terminal; the URL holds a state, no token).
func WithOutput(w io.Writer) Option { return func(o *options) { o.out = w } }

// SignIn signs manager in from a command-line tool: listens on the port of the manager's loopback
// redirect URI, asks the tenant whether it knows that redirect URI (CheckRedirect), shows the
// authorize URL (WithOpenBrowser, else printed), waits for one callback, completes the authorization
// and tells the browser how it ended. ctx cancels the wait.
// The manager's RedirectURI must be http://127.0.0.1:<port>/<path> (or localhost, [::1]) with the port
// registered for the client: the tenant compares redirect URIs exactly.
// Errors: INVALID_OPTIONS (also for a nil option or a manager not made by tokenmanager.New),
// CALLBACK_PORT_IN_USE, REDIRECT_URI_REFUSED, TRANSIENT (the tenant did not answer: the sign-in
// fails at once rather than waiting for a callback that cannot come), CALLBACK_TIMEOUT, ctx.Err(),
// and what CompleteAuthorization returns (AUTHORIZATION_DENIED, STATE_MISMATCH…).
// See RFC 8252 §7.3, §8.3; RFC 6749 §4.1; RFC 7636.
func SignIn(ctx context.Context, manager *tokenmanager.Manager, opts ...Option) (tokenmanager.SessionInfo, error) {
	o := options{timeout: DefaultTimeout, out: os.Stderr}
	for i, opt := range opts {
		if opt == nil {
			return tokenmanager.SessionInfo{}, tokenmanager.NewError(tokenmanager.CodeInvalidOptions, fmt.Sprintf("option %d is nil", i+1), nil)
		}
		opt(&o)
	}
	if manager.BaseURL() == "" { // nil, or a zero value: not made by tokenmanager.New
		return tokenmanager.SessionInfo{}, tokenmanager.NewError(tokenmanager.CodeInvalidOptions, "manager: give the *tokenmanager.Manager made by tokenmanager.New", nil)
	}
	if o.timeout <= 0 {
		return tokenmanager.SessionInfo{}, tokenmanager.NewError(tokenmanager.CodeInvalidOptions, "WithTimeout: give a positive duration", nil)
	}
	if _, port, _, err := check(manager.RedirectURI()); err != nil {
		return tokenmanager.SessionInfo{}, err
	} else if port == 0 {
		return tokenmanager.SessionInfo{}, invalid("port 0 cannot be registered with the tenant, which compares redirect URIs exactly: give the registered port (Listen takes port 0 for tests)")
	}
	server, err := Listen(manager.RedirectURI())
	if err != nil {
		return tokenmanager.SessionInfo{}, err
	}
	defer server.Close()
	request, err := manager.BeginAuthorization(ctx)
	if err != nil {
		return tokenmanager.SessionInfo{}, err
	}
	if err := server.CheckRedirect(ctx, request.URL, o.client); err != nil {
		return tokenmanager.SessionInfo{}, err
	}
	go show(request.URL, o, server)
	callback, err := server.Wait(ctx, o.timeout)
	if err != nil {
		return tokenmanager.SessionInfo{}, err
	}
	session, err := manager.CompleteAuthorization(ctx, callback)
	if err != nil {
		server.Respond(reason(err))
		return tokenmanager.SessionInfo{}, err
	}
	server.Respond("")
	return session, nil
}

// show opens the browser, or prints the address when none opened and the callback has not come.
func show(authorizeURL string, o options, server *Server) {
	opened := false
	if o.open != nil {
		opened = o.open(authorizeURL) == nil
	}
	if !opened && !server.CalledBack() {
		_, _ = fmt.Fprintf(o.out, "Open this address in a browser to sign in:\n%s\n", authorizeURL)
	}
}

// reason is what the browser's page says of a failure: the code (and the OAuth error), no secret.
func reason(err error) string {
	var failure *tokenmanager.Error
	if errors.As(err, &failure) {
		if failure.OAuthError != "" {
			return string(failure.Code) + " (" + failure.OAuthError + ")"
		}
		return string(failure.Code)
	}
	return "an error"
}
