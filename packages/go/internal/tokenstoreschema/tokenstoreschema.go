// Package tokenstoreschema checks records against the JSON Schemas of spec/token-store/ (the token
// record, the pending sign-in, the refresh intent and the token file), which every kit's records
// are tested against, with a JSON Schema 2020-12 validator (santhosh-tekuri/jsonschema/v6). For the
// tests of the Go kit only: no package of the kit imports it.
package tokenstoreschema

import (
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schemas' file names.
const (
	TokenRecord   = "token-record.schema.json"
	PendingRecord = "pending-record.schema.json"
	IntentRecord  = "intent-record.schema.json"
	TokenFile     = "token-file.schema.json"
)

// ForKey is the schema of the record stored under key (…:tokens, …:pending or …:pending:<key>,
// …:intent), "" for another key.
func ForKey(key string) string {
	if parts := strings.Split(key, ":"); len(parts) > 1 && parts[len(parts)-2] == "pending" {
		return PendingRecord
	}
	switch key[strings.LastIndex(key, ":")+1:] {
	case "tokens":
		return TokenRecord
	case "pending":
		return PendingRecord
	case "intent":
		return IntentRecord
	}
	return ""
}

// Dir is spec/token-store of the repository this package is built from.
func Dir() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "..", "..", "spec", "token-store")
}

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

func schema(tb testing.TB, name string) *jsonschema.Schema {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[name]; ok {
		return s
	}
	s, err := jsonschema.NewCompiler().Compile(filepath.Join(Dir(), name))
	if err != nil {
		tb.Fatalf("the schema %s does not compile: %v", name, err)
	}
	compiled[name] = s
	return s
}

// Errors validates the JSON text raw against the schema name: nil when it validates, else what is
// wrong (the validator's words: paths and keywords, and the failing values, so never pass it tokens
// a test must not print).
func Errors(tb testing.TB, name, raw string) error {
	tb.Helper()
	instance, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		return err
	}
	return schema(tb, name).Validate(instance)
}
