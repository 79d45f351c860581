package tokenmanager

import (
	"testing"

	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
)

func TestTheNamesOfAScopeAndOfAPendingSignInAreTheSharedVectors(t *testing.T) {
	vectors := tokenstoreschema.ReadVectors(t)
	for _, v := range vectors.Scopes {
		session := ""
		if v.Session != nil {
			session = *v.Session
		}
		got := scopeNames(v.Origin, v.ClientID, session)
		if got.tokens != v.Names["tokens"] || got.intent != v.Names["intent"] || got.lock != v.Names["lock"] {
			t.Errorf("%s: %+v, want %v", v.Scope, got, v.Names)
		}
	}
	for _, v := range vectors.Pending {
		if key := pendingKey(v.State); key != v.Key {
			t.Errorf("the key of %s: %s, want %s", v.State, key, v.Key)
		}
		if name := newPendingStorage(nil, nil, v.Origin, v.ClientID).name(v.State); name != v.Name {
			t.Errorf("the name of %s: %s, want %s", v.State, name, v.Name)
		}
	}
}
