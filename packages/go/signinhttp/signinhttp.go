// Package signinhttp is the sign-in of a server acting for many users as net/http handlers: Start
// sends the browser to the tenant for the logged-in user of the app, and Callback completes the
// sign-in when the tenant sends it back, storing the tokens under that user's session of a
// tokenmanager.Sessions (the TypeScript kit's signInHandlers, the Python kit's ASGI handlers).
//
//	handlers, err := signinhttp.New(sessions, signinhttp.Options{
//		SessionOf: func(r *http.Request) (string, error) { return currentUserID(r) }, // the app's own login
//	})
//	mux.Handle("POST /connect", handlers.Start)
//	mux.Handle("GET /callback", handlers.Callback) // the path of the Config's RedirectURI
//
// The session id always comes from the app's own idea of who is logged in (SessionOf), never from
// the query or a form, which another person could write. Each sign-in is bound to the browser that
// began it (login CSRF, RFC 9700 §4.7.1, RFC 6749 §10.12): Start gives the browser a binding in a
// cookie (__Host-tenant-signin on https, tenant-signin on http: 32 random bytes, HttpOnly,
// SameSite=Lax, Path=/, Secure on https, for the pending lifetime; a valid one already there is
// reused, so two tabs share it), the pending sign-in keeps its SHA-256, and Callback refuses, before
// any exchange, a callback whose browser does not bring it (spec/token-store/README.md, "Binding a
// sign-in to its browser"). An app that keeps its own server session may give its own binding
// instead (Options.Binding).
//
// Behind a load balancer or a proxy: the callback URL is the configured RedirectURI with the
// request's query, never rebuilt from the Host or X-Forwarded-* headers; Callback answers only at
// its path. Errors answer with a short text that holds no token, code or state (400 for a sign-in
// refused, 401 when SessionOf finds nobody logged in, 503 when the storage or the tenant failed),
// after Options.OnError is called with the error.
package signinhttp

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The binding cookie's names: with the __Host- prefix on https (RFC 6265bis §4.1.3.2: Secure,
// Path=/, no Domain, so no other host and no http page can set it), without on http (loopback
// development, where a cookie cannot be Secure).
const (
	CookieName       = "__Host-tenant-signin"
	CookieNameOnHTTP = "tenant-signin"
)

// cookieValue is the form of a binding the start handler reuses: 43 base64url characters (32
// bytes); any other value counts as no cookie.
var cookieValue = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// Options configure the handlers.
type Options struct {
	// SessionOf returns the session id of the request's logged-in user: the app's own login (its
	// cookie, its server session), never a value of the query or of a form. An error means nobody
	// is logged in (401). Required.
	SessionOf func(*http.Request) (string, error)
	// Binding, when set, returns the app's own browser binding for the request instead of the cookie:
	// a value only this browser's requests carry (its server session's id, say; "" for none).
	Binding func(*http.Request) string
	// Scopes are the scopes asked for (default the Config's).
	Scopes []scope.Scope
	// AfterSignIn is where Callback sends the browser once signed in, with 303 See Other (default "/").
	AfterSignIn string
	// AnySession lets Callback complete a sign-in begun for any session, without asking SessionOf:
	// for an app whose login does not reach the callback (a SameSite=Strict login cookie is not sent
	// on the tenant's redirect back). By default the sign-in must have been begun for the session of
	// the user logged in on this browser now, or it is refused before any exchange.
	AnySession bool
	// OnSignedIn, when set, answers a completed sign-in instead of the redirect to AfterSignIn.
	OnSignedIn func(http.ResponseWriter, *http.Request, tokenmanager.SignedIn)
	// OnError is called with every error of the handlers, before the answer (for logs: the error
	// holds no token, code or state).
	OnError func(*http.Request, error)
}

// Handlers are the two handlers of a sign-in.
type Handlers struct {
	// Start begins a sign-in for the logged-in user (GET or POST): it sets the binding cookie and
	// answers 303 See Other to the tenant's authorize URL.
	Start http.Handler
	// Callback completes it (GET, at the path of the RedirectURI): it checks the callback, exchanges
	// the code, stores the tokens under the sign-in's session, and answers 303 to AfterSignIn.
	Callback http.Handler
}

// handlers is what both handlers share.
type handlers struct {
	sessions     *tokenmanager.Sessions
	o            Options
	redirect     *url.URL
	callbackBase string // the RedirectURI without its query
	cookieName   string
	secure       bool
	maxAge       int // seconds
}

// New makes the handlers of sessions. Errors: INVALID_OPTIONS (no Sessions, no SessionOf).
func New(sessions *tokenmanager.Sessions, options Options) (*Handlers, error) {
	if sessions == nil {
		return nil, invalid("sessions", "give the tokenmanager.Sessions the tokens are stored in")
	}
	if options.SessionOf == nil {
		return nil, invalid("SessionOf", "give the function that names the request's logged-in user (the app's own login)")
	}
	if options.AfterSignIn == "" {
		options.AfterSignIn = "/"
	}
	redirect, err := url.Parse(sessions.RedirectURI())
	if err != nil {
		return nil, invalid("RedirectURI", err.Error())
	}
	h := &handlers{sessions: sessions, o: options, redirect: redirect, secure: redirect.Scheme == "https",
		maxAge: maxAgeOf(sessions.PendingLifetime())}
	base := *redirect
	base.RawQuery, base.ForceQuery = "", false
	h.callbackBase = base.String()
	h.cookieName = CookieNameOnHTTP
	if h.secure {
		h.cookieName = CookieName
	}
	return &Handlers{Start: http.HandlerFunc(h.start), Callback: http.HandlerFunc(h.callback)}, nil
}

func invalid(name, why string) error {
	return tokenmanager.NewError(tokenmanager.CodeInvalidOptions, name+": "+why, nil)
}

// start begins a sign-in for the logged-in user, bound to this browser.
func (h *handlers) start(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	id, err := h.o.SessionOf(r)
	if err != nil {
		h.fail(w, r, http.StatusUnauthorized, "log in first", err)
		return
	}
	binding, own := h.binding(r)
	signIn, err := h.sessions.BeginSignIn(r.Context(), id, binding, h.o.Scopes...)
	if err != nil {
		h.fail(w, r, statusOf(err), "the sign-in could not be started", err)
		return
	}
	if !own {
		http.SetCookie(w, h.cookie(signIn.Binding))
	}
	http.Redirect(w, r, signIn.URL, http.StatusSeeOther)
}

// binding is the request's binding: the app's own (own is true), or the cookie's when it has the
// form of one ("" otherwise: BeginSignIn makes a new one).
func (h *handlers) binding(r *http.Request) (binding string, own bool) {
	if h.o.Binding != nil {
		return h.o.Binding(r), true
	}
	if cookie, err := r.Cookie(h.cookieName); err == nil && cookieValue.MatchString(cookie.Value) {
		return cookie.Value, false
	}
	return "", false
}

// cookie is the binding cookie (spec/token-store/README.md, "Binding a sign-in to its browser"): set
// again at each start, so that it lives as long as the newest sign-in.
func (h *handlers) cookie(binding string) *http.Cookie {
	return &http.Cookie{Name: h.cookieName, Value: binding, Path: "/", MaxAge: h.maxAge, HttpOnly: true,
		Secure: h.secure, SameSite: http.SameSiteLaxMode}
}

// callback completes a sign-in: the binding and the logged-in user checked before any exchange.
func (h *handlers) callback(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.EscapedPath() != h.redirect.EscapedPath() {
		h.fail(w, r, http.StatusNotFound, "not the callback's path",
			fmt.Errorf("the callback handler answers at %s (the path of the RedirectURI), not %s", h.redirect.EscapedPath(), r.URL.EscapedPath()))
		return
	}
	binding, _ := h.binding(r)
	callback := tokenmanager.Callback{URL: h.callbackBase + "?" + r.URL.RawQuery, Binding: binding}
	if !h.o.AnySession {
		id, err := h.o.SessionOf(r)
		if err != nil {
			h.fail(w, r, http.StatusUnauthorized, "log in first, then connect again", err)
			return
		}
		callback.SessionID = id
	}
	signedIn, err := h.sessions.CompleteSignIn(r.Context(), callback)
	if err != nil {
		h.fail(w, r, statusOf(err), "the sign-in could not be completed", err)
		return
	}
	if h.o.OnSignedIn != nil {
		h.o.OnSignedIn(w, r, signedIn)
		return
	}
	http.Redirect(w, r, h.o.AfterSignIn, http.StatusSeeOther)
}

// fail calls OnError, then answers status with a short text: what failed, and for the kit's errors
// why in words (their messages hold no token, code or state).
func (h *handlers) fail(w http.ResponseWriter, r *http.Request, status int, what string, err error) {
	if h.o.OnError != nil {
		h.o.OnError(r, err)
	}
	text := what
	var failure *tokenmanager.Error
	if errors.As(err, &failure) {
		text += ": " + reason(failure)
	}
	http.Error(w, text, status)
}

// reason is a short sentence for the browser, from the error's code.
func reason(failure *tokenmanager.Error) string {
	switch failure.Code {
	case tokenmanager.CodeStateMismatch:
		return failure.Message + "; start it again"
	case tokenmanager.CodeNoPendingSignIn:
		return "it was already used, or has expired; start it again"
	case tokenmanager.CodeStateExpired:
		return "it expired; start it again"
	case tokenmanager.CodeAuthorizationDenied:
		return "access was not granted (" + failure.OAuthError + ")"
	case tokenmanager.CodeInvalidSessionID:
		return "the user's id cannot name a session"
	case tokenmanager.CodeStorageFailed, tokenmanager.CodeLockTimeout, tokenmanager.CodeTransient:
		return "try again in a moment"
	}
	return failure.Message
}

// statusOf: 503 when the storage or the tenant failed (the request may work later), 400 otherwise.
func statusOf(err error) int {
	for _, transient := range []error{tokenmanager.ErrStorageFailed, tokenmanager.ErrLockTimeout, tokenmanager.ErrTransient} {
		if errors.Is(err, transient) {
			return http.StatusServiceUnavailable
		}
	}
	return http.StatusBadRequest
}

// noStore: no cache keeps an answer of the sign-in (RFC 6749 §5.1's rule for tokens, followed for
// the redirects that carry a state).
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
}

// maxAgeOf is the cookie's Max-Age for a pending lifetime: its seconds, rounded up.
func maxAgeOf(lifetime time.Duration) int { return int(math.Ceil(lifetime.Seconds())) }
