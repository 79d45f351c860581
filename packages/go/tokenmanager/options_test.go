package tokenmanager

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

func TestInvalidOptionsAreRefused(t *testing.T) {
	for _, config := range []Config{
		{BaseURL: "http://acme.example", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", Scopes: []scope.Scope{scope.ProfileRead}},
		{BaseURL: "https://acme.example/api/v1", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", Scopes: []scope.Scope{scope.ProfileRead}},
		{BaseURL: "https://acme.example", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", Scopes: []scope.Scope{"profile:write"}},
	} {
		if _, err := New(config); !errors.Is(err, ErrInvalidOptions) {
			t.Fatalf("%v: %v", config, err)
		}
	}
}

func TestANilOptionHookOrStorageIsInvalidOptionsNotAPanic(t *testing.T) {
	config := Config{BaseURL: "https://acme.example", ClientID: "c", RedirectURI: "http://127.0.0.1:53682/cb", Scopes: []scope.Scope{scope.ProfileRead}}
	var failedStorage *MemoryStorage // what a constructor that failed leaves behind
	var failedLock *ProcessLock
	for name, opts := range map[string][]Option{
		"a nil option":        {nil},
		"a nil hook":          {WithOnChange(nil)},
		"a nil storage":       {WithStorage(failedStorage)},
		"a nil lock":          {WithLock(failedLock)},
		"a nil pending store": {WithPendingStorage(failedStorage)},
	} {
		if _, err := New(config, opts...); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: got %v, want INVALID_OPTIONS", name, err)
		}
	}
}

// A Manager not made by New (a zero value, or nil) fails every call with INVALID_OPTIONS: it used
// to panic in a goroutine of the kit's, which ends the whole process.
func TestAManagerNotMadeByNewFailsEveryCallInsteadOfPanicking(t *testing.T) {
	ctx := context.Background()
	for name, m := range map[string]*Manager{"zero value": {}, "nil": nil} {
		request, _ := http.NewRequest(http.MethodGet, "https://acme.example/api/v1/auth/user", nil)
		_, transportErr := m.Transport(nil).RoundTrip(request)
		_, tokenErr := m.Token()
		_, beginErr := m.BeginAuthorization(ctx)
		_, completeErr := m.CompleteAuthorization(ctx, "http://127.0.0.1:53682/cb?code=x&state=y")
		_, signedInErr := m.IsSignedIn(ctx)
		_, accessErr := m.AccessToken(ctx)
		m.OnUnauthorized("x")
		for call, err := range map[string]error{"AccessToken": accessErr, "Token": tokenErr, "Transport": transportErr,
			"BeginAuthorization": beginErr, "CompleteAuthorization": completeErr, "IsSignedIn": signedInErr,
			"Revoke": m.Revoke(ctx), "SignOut": m.SignOut(ctx)} {
			if !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("%s Manager, %s: got %v, want INVALID_OPTIONS", name, call, err)
			}
		}
		if m.BaseURL() != "" || m.RedirectURI() != "" {
			t.Errorf("%s Manager: a base URL or redirect URI", name)
		}
	}
}
