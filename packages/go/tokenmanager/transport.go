package tokenmanager

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
)

// Token returns a valid token (oauth2.TokenSource), refreshing it first when needed; it waits
// without a deadline. Use TokenSource(ctx) to bound the wait.
func (m *Manager) Token() (*oauth2.Token, error) { return m.tokenFor(context.Background()) }

// TokenSource is the manager as an oauth2.TokenSource whose calls use ctx.
func (m *Manager) TokenSource(ctx context.Context) oauth2.TokenSource { return tokenSource{m, ctx} }

type tokenSource struct {
	m   *Manager
	ctx context.Context
}

func (s tokenSource) Token() (*oauth2.Token, error) { return s.m.tokenFor(s.ctx) }

func (m *Manager) tokenFor(ctx context.Context) (*oauth2.Token, error) {
	token, err := m.AccessToken(ctx)
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: token, TokenType: "Bearer", Expiry: m.freshUntil(token)}, nil
}

// freshUntil is when the manager stops serving token (its lifetime minus the refresh leeway, on
// the manager's clock), as wall-clock time: oauth2.ReuseTokenSource (oauth2.NewClient) caches a
// token until its Expiry and treats a zero Expiry as never expiring (RFC 6749 §5.1 expires_in).
// Past it, oauth2 asks the manager again, which refreshes. A token no longer current expires now.
func (m *Manager) freshUntil(token string) time.Time {
	m.mu.Lock()
	current := m.current
	m.mu.Unlock()
	if current == nil || current.AccessToken != token {
		return time.Now()
	}
	nowMs := m.nowMs()
	return time.Now().Add(time.Duration((m.freshUntilMs(current, nowMs) - nowMs) * float64(time.Millisecond)))
}

// Transport returns an http.RoundTripper that adds the bearer token to requests for the tenant's
// origin only (never to another origin, so never over a redirect elsewhere), with Accept:
// application/json when the request has no Accept, and after a 401 tells the manager
// (OnUnauthorized) and sends the request once more with the new token when its body can be
// replayed. When no token can be had (before the request, or after its 401: the session ended, the
// tenant cannot be reached), the request fails with the manager's *Error, which errors.Is and
// errors.As find through the *url.Error of http.Client:
//
//	if errors.Is(err, tokenmanager.ErrSessionEnded) { /* sign in again */ }
//
// Assumption (not in the service description, which shows no status for an expired or revoked
// token): the API answers such a token 401 (RFC 6750 §3.1).
//
// base is the next layer (nil: http.DefaultTransport). Layer retry and logging around it as usual.
//
//	client := &http.Client{Transport: manager.Transport(nil)}
func (m *Manager) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if err := m.made(); err != nil {
		return failing{err} // a zero-value or nil Manager: every request fails saying so
	}
	// m.origin was normalized by New, so it parses, and its scheme and host are in normalTarget's form.
	origin, _ := url.Parse(m.origin)
	return &bearer{m: m, base: base, scheme: origin.Scheme, host: origin.Host}
}

// bearer is the RoundTripper of Transport. Its per-call work is kept to what the RoundTripper
// contract asks of any layer that sets a header (a clone of the request); the rest is done once:
// the origin is split at construction, the header value is kept with the token it was built for,
// and with the default clock the token is the manager's armed token (armed.go), read with no clock.
type bearer struct {
	m            *Manager
	base         http.RoundTripper
	scheme, host string // the tenant's origin, as normalTarget writes it
	header       atomic.Pointer[authorization]
}

// authorization is an Authorization header value and the token it carries.
type authorization struct{ token, value string }

func (b *bearer) RoundTrip(request *http.Request) (*http.Response, error) {
	if !b.forTenant(request.URL) {
		return b.base.RoundTrip(request)
	}
	replayable := canReplay(request)
	token, err := b.m.transportToken(request.Context(), replayable)
	if err != nil {
		closeBody(request)
		return nil, err
	}
	response, err := b.base.RoundTrip(b.withToken(request, token))
	if err != nil || response.StatusCode != http.StatusUnauthorized {
		return response, err
	}
	if !replayable {
		return response, nil // the body cannot be sent again
	}
	b.m.OnUnauthorized(token)
	again, err := b.m.AccessToken(request.Context())
	if err != nil {
		// No token to send the request again with (the session ended, the tenant cannot be reached):
		// the caller gets why, as x/oauth2's Transport gives its TokenSource's error.
		_ = response.Body.Close()
		return nil, err
	}
	if again == token {
		return response, nil
	}
	retry := b.withToken(request, again)
	if request.GetBody != nil {
		if retry.Body, err = request.GetBody(); err != nil {
			return response, nil
		}
	}
	_ = response.Body.Close()
	return b.base.RoundTrip(retry)
}

// failing is the Transport of a Manager not made by New: it sends nothing.
type failing struct{ err error }

func (f failing) RoundTrip(request *http.Request) (*http.Response, error) {
	closeBody(request)
	return nil, f.err
}

// canReplay: the request can be sent again after a 401 (no body, or one GetBody makes again).
func canReplay(request *http.Request) bool {
	return request.Body == nil || request.Body == http.NoBody || request.GetBody != nil
}

// forTenant: u is on the tenant's origin. A URL written as the origin is written (the usual case)
// is recognised without normalizing it; any other spelling (upper case, a default port) is
// normalized as New normalized the origin.
func (b *bearer) forTenant(u *url.URL) bool {
	if u == nil {
		return false
	}
	if u.Scheme == b.scheme && u.Host == b.host {
		return true
	}
	return normalTarget(u, false) == b.m.origin
}

// withToken clones the request (a RoundTripper must not change the caller's) with the bearer token
// (RFC 6750 §2.1) and, when the request names none, Accept: application/json: the API answers JSON,
// and the service description requires the header of GET /api/v1/auth/user.
func (b *bearer) withToken(request *http.Request, token string) *http.Request {
	clone := request.Clone(request.Context())
	clone.Header.Set("Authorization", b.authorization(token))
	if len(clone.Header["Accept"]) == 0 {
		clone.Header["Accept"] = []string{"application/json"}
	}
	return clone
}

// closeBody closes a request's body: a RoundTripper closes it, even when it sends nothing.
func closeBody(request *http.Request) {
	if request.Body != nil {
		_ = request.Body.Close()
	}
}

// authorization is "Bearer " + token, built once per token rather than once per request.
func (b *bearer) authorization(token string) string {
	if last := b.header.Load(); last != nil && last.token == token {
		return last.value
	}
	header := &authorization{token: token, value: "Bearer " + token}
	b.header.Store(header)
	return header.value
}
