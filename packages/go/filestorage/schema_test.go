package filestorage_test

// The token file the Go kit writes validates against spec/token-store/token-file.schema.json, and
// each record in it against its own schema, as the TypeScript and Python kits' files do: the three
// kits share one token file.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// validFile checks the token file at path and every record in it; returns the kinds it holds.
func validFile(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return validText(t, raw)
}

// validText checks the text of a token file and every record in it; returns the kinds it holds.
func validText(t *testing.T, raw []byte) []string {
	t.Helper()
	if err := tokenstoreschema.Errors(t, tokenstoreschema.TokenFile, string(raw)); err != nil {
		t.Errorf("the token file does not validate: %v", err)
	}
	var entries map[string]string
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for key, value := range entries {
		kind := key[strings.LastIndex(key, ":")+1:]
		if tokenstoreschema.ForKey(key) == tokenstoreschema.PendingRecord {
			kind = "pending" // …:pending:<key>
		}
		kinds = append(kinds, kind)
		if err := tokenstoreschema.Errors(t, tokenstoreschema.ForKey(key), value); err != nil {
			t.Errorf("the %s record in the token file does not validate: %v", kind, err)
		}
	}
	return kinds
}

func TestTheTokenFileTheGoKitWritesValidatesWithEachOfItsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	var duringRefresh []byte // the file while the refresh request is at the tenant
	issued := 0
	tenant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["grant_type"] == "refresh_token" {
			duringRefresh, _ = os.ReadFile(path) // the intent is stored before the request leaves
		}
		issued++
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"at_%d_0123456789","refresh_token":"rt_%d_0123456789","token_type":"Bearer","expires_in":900,"scope":"profile:read"}`, issued, issued)
	}))
	defer tenant.Close()
	storage, err := filestorage.New(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: tenant.URL, ClientID: "c", RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes: []scope.Scope{scope.ProfileRead}}, tokenmanager.WithStorage(storage), tokenmanager.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	request, _ := m.BeginAuthorization(ctx)
	authorize, _ := url.Parse(request.URL)
	if _, err := m.CompleteAuthorization(ctx, request.RedirectURI+"?code=the-code&state="+url.QueryEscape(authorize.Query().Get("state"))); err != nil {
		t.Fatal(err)
	}
	if _, err := m.BeginAuthorization(ctx); err != nil { // a pending sign-in beside the tokens
		t.Fatal(err)
	}
	if kinds := strings.Join(validFile(t, path), " "); len(kinds) != len("tokens pending") {
		t.Fatalf("the file holds %q, want the tokens and a pending sign-in", kinds)
	}
	now = now.Add(16 * time.Minute)
	if _, err := m.AccessToken(ctx); err != nil {
		t.Fatal(err)
	}
	if kinds := validText(t, duringRefresh); !strings.Contains(strings.Join(kinds, " "), "intent") {
		t.Fatalf("during the refresh the file held %v, want an intent too", kinds)
	}
	validFile(t, path)
}
