package tokenmanager

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRejectsACallbackWhoseStateDiffersByOneCharacterBeforeAnyRequest(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	request, _ := m.BeginAuthorization(context.Background())
	callback := callbackFor(t, request)
	last := callback[len(callback)-1]
	swapped := byte('A')
	if last == 'A' {
		swapped = 'B'
	}
	_, err := m.CompleteAuthorization(context.Background(), callback[:len(callback)-1]+string(swapped))
	if !errors.Is(err, ErrStateMismatch) || tn.requests.Load() != 0 {
		t.Fatalf("err %v, %d requests", err, tn.requests.Load())
	}
	// Single use: the pending sign-in is gone, even with the right state.
	if _, err := m.CompleteAuthorization(context.Background(), callback); !errors.Is(err, ErrNoPendingSignIn) {
		t.Fatalf("second use: %v", err)
	}
}

func TestRefusesACallbackAtAnotherURIBeforeTakingThePendingSignIn(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	request, _ := m.BeginAuthorization(context.Background())
	callback := callbackFor(t, request)
	if _, err := m.CompleteAuthorization(context.Background(), strings.Replace(callback, "/callback", "/other", 1)); !errors.Is(err, ErrInvalidCallback) {
		t.Fatalf("err %v", err)
	}
	if _, err := m.CompleteAuthorization(context.Background(), callback); err != nil {
		t.Fatalf("the right callback after a wrong one: %v", err)
	}
}
