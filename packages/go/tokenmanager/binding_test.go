package tokenmanager

import (
	"errors"
	"testing"

	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
)

func TestABindingsHashAndTheRefusalRuleAreTheSharedVectors(t *testing.T) {
	vectors := tokenstoreschema.ReadVectors(t)
	for _, v := range vectors.Bindings {
		if got := BindingHash(v.Binding); got != v.Browser {
			t.Errorf("%s: %s, want %s", v.Note, got, v.Browser)
		}
	}
	for _, check := range vectors.BindingChecks {
		browser, binding := "", ""
		if check.Browser != nil {
			browser = *check.Browser
		}
		if check.Binding != nil {
			binding = *check.Binding
		}
		err := checkBinding(browser, binding)
		switch {
		case check.Outcome == "accept" && err != nil:
			t.Errorf("%s: refused: %v", check.Note, err)
		case check.Outcome == "STATE_MISMATCH" && !errors.Is(err, ErrStateMismatch):
			t.Errorf("%s: %v", check.Note, err)
		}
	}
}

func TestANewBindingIs32RandomBytesInBase64URL(t *testing.T) {
	a, b := NewBinding(), NewBinding()
	if len(a) != 43 || a == b || !recordID.MatchString(a) {
		t.Fatalf("%q, %q", a, b)
	}
}
