package filestorage_test

// What a caller of the token manager gets when the token file is at fault, whichever call meets
// it: the rule of every kit (STORAGE_FAILED with the storage's error as its cause; a file set aside
// as corrupt is NOT_SIGNED_IN saying where it went, with a warning and a storage-failed event).

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// managerOn is a manager on the token file at path, with its log and its events.
func managerOn(t *testing.T, path string) (*tokenmanager.Manager, *bytes.Buffer, *[]tokenmanager.Event) {
	t.Helper()
	storage, err := filestorage.New(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	events := &[]tokenmanager.Event{}
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: "http://127.0.0.1:9", ClientID: "c",
		RedirectURI: "http://127.0.0.1:53682/callback", Scopes: []scope.Scope{scope.ProfileRead}},
		tokenmanager.WithStorage(storage), tokenmanager.WithLogger(slog.New(slog.NewTextHandler(logs, nil))),
		tokenmanager.WithOnChange(func(e tokenmanager.Event) { *events = append(*events, e) }))
	if err != nil {
		t.Fatal(err)
	}
	return m, logs, events
}

func TestACorruptOrEmptyTokenFileIsReportedWithWhereItWentWhenAccessTokenIsTheFirstCall(t *testing.T) {
	for name, content := range map[string]string{"empty": "", "not JSON": "{not json"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			m, logs, events := managerOn(t, path)
			_, err := m.AccessToken(context.Background())
			var failure *tokenmanager.Error
			if !errors.Is(err, tokenmanager.ErrNotSignedIn) || !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeFileCorrupt}) || !errors.As(err, &failure) {
				t.Fatalf("got %v, want NOT_SIGNED_IN caused by FILE_CORRUPT", err)
			}
			if _, statErr := os.Stat(failure.MovedTo); failure.MovedTo == "" || statErr != nil {
				t.Fatalf("MovedTo %q (%v): the file set aside is not named", failure.MovedTo, statErr)
			}
			if !strings.Contains(err.Error(), failure.MovedTo) || !strings.Contains(err.Error(), path) {
				t.Fatalf("the message %q does not say where the file went", err)
			}
			if len(*events) != 1 || (*events)[0].Kind != tokenmanager.EventStorageFailed || !strings.Contains(logs.String(), failure.MovedTo) {
				t.Fatalf("events %v, log %q: want one storage-failed and a log line naming the moved file", *events, logs)
			}
		})
	}
}

func TestAFaultOfTheTokenFileIsStorageFailedWhicheverCallMeetsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.Mkdir(path, 0o700); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	m, _, _ := managerOn(t, path)
	_, accessErr := m.AccessToken(context.Background())
	_, signInErr := m.BeginAuthorization(context.Background())
	for call, err := range map[string]error{"AccessToken": accessErr, "BeginAuthorization": signInErr} {
		if !errors.Is(err, tokenmanager.ErrStorageFailed) || !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeFileUnsafe}) {
			t.Errorf("%s: got %v, want STORAGE_FAILED caused by FILE_UNSAFE", call, err)
		}
		if err != nil && !strings.Contains(err.Error(), path+" is not a regular file") {
			t.Errorf("%s: %q does not say why", call, err)
		}
	}
}

func TestAPrintedStorageErrorSaysWhyAndWhere(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "tokens.json") // its directory is a regular file
	m, _, _ := managerOn(t, path)
	_, err := m.BeginAuthorization(context.Background())
	if !errors.Is(err, tokenmanager.ErrStorageFailed) || !strings.Contains(err.Error(), "not a directory") || !strings.Contains(err.Error(), blocker) {
		t.Fatalf("got %q, want STORAGE_FAILED saying the path and \"not a directory\"", err)
	}
}

func TestANilOptionIsInvalidOptionsNotAPanic(t *testing.T) {
	if _, err := filestorage.New(filepath.Join(t.TempDir(), "tokens.json"), nil); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
		t.Fatalf("got %v, want INVALID_OPTIONS", err)
	}
}
