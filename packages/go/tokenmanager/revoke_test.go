package tokenmanager

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRevokeSendsAFormAndClearsTheSession(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	signIn(t, m)
	if err := m.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	tn.mu.Lock()
	last := tn.bodies[len(tn.bodies)-1]
	tn.mu.Unlock()
	if !strings.Contains(last, "token_type_hint=access_token") || !strings.Contains(last, "client_id=c") {
		t.Fatalf("revoke body %q", last)
	}
	if _, err := m.AccessToken(context.Background()); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("after revoke: %v", err)
	}
}
