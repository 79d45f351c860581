package tokenmanager

import (
	"errors"
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
