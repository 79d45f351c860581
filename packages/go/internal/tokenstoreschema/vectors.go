package tokenstoreschema

// The shared test vectors of spec/token-store/vectors/sessions.json (README.md, "Test vectors"),
// read by path by every kit's tests so that the kits cannot drift apart.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Vectors is sessions.json.
type Vectors struct {
	SessionIDs struct {
		Valid []struct {
			ID   string `json:"id"`
			Note string `json:"note"`
		} `json:"valid"`
		Invalid []struct {
			ID      string `json:"id"`
			Code    string `json:"code"`
			Message string `json:"message"`
			Note    string `json:"note"`
		} `json:"invalid"`
	} `json:"sessionIds"`
	Scopes []struct {
		Origin    string            `json:"origin"`
		ClientID  string            `json:"clientId"`
		Session   *string           `json:"session"`
		Prefix    string            `json:"prefix"`
		Scope     string            `json:"scope"`
		Names     map[string]string `json:"names"`
		RedisKeys map[string]string `json:"redisKeys"`
		Channel   string            `json:"channel"`
		Slot      int               `json:"slot"`
		File      string            `json:"file"`
		FileLocks struct {
			Refresh string `json:"refresh"`
			Write   string `json:"write"`
		} `json:"fileLocks"`
	} `json:"scopes"`
	Pending []struct {
		Origin   string `json:"origin"`
		ClientID string `json:"clientId"`
		Prefix   string `json:"prefix"`
		State    string `json:"state"`
		Key      string `json:"key"`
		Name     string `json:"name"`
		RedisKey string `json:"redisKey"`
		Slot     int    `json:"slot"`
	} `json:"pending"`
	PendingRecords []struct {
		Record *struct {
			State     string  `json:"state"`
			Verifier  string  `json:"verifier"`
			ExpiresAt int64   `json:"expiresAt"`
			SessionID *string `json:"sessionId"`
			Browser   *string `json:"browser"`
		} `json:"record"`
		Text  string `json:"text"`
		Valid bool   `json:"valid"`
		Note  string `json:"note"`
	} `json:"pendingRecords"`
	Bindings []struct {
		Binding string `json:"binding"`
		Browser string `json:"browser"`
		Note    string `json:"note"`
	} `json:"bindings"`
	BindingChecks []struct {
		Browser *string `json:"browser"`
		Binding *string `json:"binding"`
		Outcome string  `json:"outcome"`
		Note    string  `json:"note"`
	} `json:"bindingChecks"`
	BindingCookieValues []struct {
		Value string `json:"value"`
		Valid bool   `json:"valid"`
	} `json:"bindingCookieValues"`
	Cookies []struct {
		RedirectURI       string `json:"redirectUri"`
		PendingLifetimeMs int64  `json:"pendingLifetimeMs"`
		Name              string `json:"name"`
		Path              string `json:"path"`
		MaxAge            int    `json:"maxAge"`
		HTTPOnly          bool   `json:"httpOnly"`
		Secure            bool   `json:"secure"`
		SameSite          string `json:"sameSite"`
	} `json:"cookies"`
}

// ReadVectors reads spec/token-store/vectors/sessions.json of the repository this package is built
// from; tb.Fatal when it cannot.
func ReadVectors(tb testing.TB) Vectors {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(Dir(), "vectors", "sessions.json"))
	if err != nil {
		tb.Fatalf("the shared test vectors: %v", err)
	}
	var v Vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatalf("the shared test vectors do not read: %v", err)
	}
	if len(v.SessionIDs.Invalid) == 0 || len(v.Scopes) == 0 || len(v.Pending) == 0 || len(v.BindingChecks) == 0 || len(v.Cookies) == 0 {
		tb.Fatal("the shared test vectors are missing a section")
	}
	return v
}
