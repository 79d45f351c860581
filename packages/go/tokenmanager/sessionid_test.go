package tokenmanager

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
)

// The rule and its messages are the shared vectors' (spec/token-store/vectors/sessions.json).
func TestSessionIDsAreCheckedAsTheSharedVectorsSay(t *testing.T) {
	vectors := tokenstoreschema.ReadVectors(t)
	for _, valid := range vectors.SessionIDs.Valid {
		if err := CheckSessionID(valid.ID); err != nil {
			t.Errorf("%s (%q): %v", valid.Note, valid.ID, err)
		}
	}
	for _, invalid := range vectors.SessionIDs.Invalid {
		err := CheckSessionID(invalid.ID)
		var failure *Error
		if !errors.As(err, &failure) || string(failure.Code) != invalid.Code || failure.Message != invalid.Message {
			t.Errorf("%s (%q):\n got  %v\n want %s: %s", invalid.Note, invalid.ID, err, invalid.Code, invalid.Message)
			continue
		}
		if err.Error() != "INVALID_SESSION_ID: "+invalid.Message || !errors.Is(err, ErrInvalidSessionID) {
			t.Errorf("%s: the error prints %q", invalid.Note, err.Error())
		}
	}
}

func TestABadSessionIDIsRefusedByNewBeforeAnythingIsWritten(t *testing.T) {
	tn := newTenant(t)
	storage := NewMemoryStorage()
	for _, id := range []string{"", "a:b", "{42}", "42}", "a/b", "x\u0000"} {
		_, err := New(Config{BaseURL: tn.URL, ClientID: "c", RedirectURI: "http://127.0.0.1:53682/callback", Scopes: testScopes},
			WithSessionID(id), WithStorage(storage))
		if !errors.Is(err, ErrInvalidSessionID) {
			t.Errorf("%q: %v", id, err)
		}
	}
	if len(storage.data) != 0 || tn.requests.Load() != 0 {
		t.Fatalf("written %v, %d requests", storage.data, tn.requests.Load())
	}
}

// The id may be personal data: a session's log lines carry it only when the logger takes debug lines.
func TestASessionsIDIsLoggedOnlyAtDebugLevelOnEveryLineOfTheSession(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		tn := newTenant(t)
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))
		m, _ := newManager(t, tn, nil, WithSessionID("ada@example.org"), WithLogger(logger))
		signIn(t, m)
		if _, err := m.AccessToken(context.Background()); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) == 0 || lines[0] == "" {
			t.Fatalf("%v: no log line", level)
		}
		for _, line := range lines {
			carries := strings.Contains(line, "session_id=ada@example.org")
			if carries != (level == slog.LevelDebug) {
				t.Errorf("at %v: %q", level, line)
			}
		}
	}
}
