package tokenmanager

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

// A printed error says why, as a fmt.Errorf("…: %w") chain does, and holds no secret.
func TestAPrintedErrorSaysWhyTheTenantCouldNotBeReachedAndHoldsNoSecret(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := listener.Addr().String()
	_ = listener.Close() // nothing listens there now
	m, err := New(Config{BaseURL: "http://" + closed, ClientID: "c", RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes: []scope.Scope{scope.ProfileRead}}, WithRefreshAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	request, err := m.BeginAuthorization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.CompleteAuthorization(context.Background(), callbackFor(t, request))
	if !errors.Is(err, ErrTransient) {
		t.Fatalf("got %v, want TRANSIENT", err)
	}
	text := err.Error()
	if !strings.Contains(text, "connection refused") || !strings.Contains(text, closed) {
		t.Fatalf("%q does not say that the connection to %s was refused", text, closed)
	}
	if strings.Contains(text, "the-code-0123456789") {
		t.Fatalf("%q holds the authorization code", text)
	}
}
