package tokenmanager

import (
	"errors"
	"strings"
	"testing"
)

func TestCodeChallengeMatchesRFC7636AppendixB(t *testing.T) {
	got, err := CodeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
	if err != nil || got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatalf("challenge = %q, %v", got, err)
	}
}

func TestNewPKCEPairMakesVerifiersOf43To128Characters(t *testing.T) {
	for _, length := range []int{43, 64, 128} {
		pair, err := NewPKCEPair(length)
		if err != nil || len(pair.Verifier) != length || !verifierPattern.MatchString(pair.Verifier) {
			t.Fatalf("length %d: %v", length, err)
		}
		if challenge, _ := CodeChallenge(pair.Verifier); challenge != pair.Challenge {
			t.Fatalf("challenge does not match the verifier")
		}
		if strings.Contains(pair.String(), pair.Verifier) {
			t.Fatalf("String shows the verifier")
		}
	}
}

func TestRejectsA42CharacterVerifierWithoutQuotingIt(t *testing.T) {
	verifier := strings.Repeat("a", 42)
	_, err := CodeChallenge(verifier)
	if !errors.Is(err, ErrInvalidVerifier) || strings.Contains(err.Error(), verifier) {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewPKCEPair(42); !errors.Is(err, ErrInvalidVerifier) {
		t.Fatalf("NewPKCEPair(42) = %v", err)
	}
}

func TestStatesAreRandomAndComparedExactly(t *testing.T) {
	a, b := newState(), newState()
	if len(a) != 43 || a == b {
		t.Fatalf("states %q %q", a, b)
	}
	differs := a[:42] + string(rune('A'+(a[42]+1)%26))
	if !statesEqual(a, a) || statesEqual(a, differs) || statesEqual(a, a[:42]) {
		t.Fatal("statesEqual is wrong")
	}
}

func TestRedactsEveryPrintedFormOfASecret(t *testing.T) {
	secret := "rt/abc def+ghi"
	text := "raw " + secret + " query rt%2Fabc+def%2Bghi path rt%2fabc%20def%2bghi"
	if got := redact(text, []string{secret}); strings.Contains(got, "abc") {
		t.Fatalf("redact left a form: %q", got)
	}
	if Secret("x").String() != Redacted {
		t.Fatal("Secret prints its value")
	}
}
