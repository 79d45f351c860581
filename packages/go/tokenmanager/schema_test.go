package tokenmanager

// The records the Go kit writes validate against the JSON Schemas of spec/token-store/, which the
// TypeScript and Python kits' records are tested against too (token-record.schema.test.ts,
// test_token_store_schema.py): the kits share one token file or one Redis key. The token file
// itself is checked in filestorage (schema_test.go there).

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
)

// recordingStorage is a storage shared with other processes (so the manager writes refresh
// intents) that keeps every value written, by key, in order.
type recordingStorage struct {
	*MemoryStorage
	mu     sync.Mutex
	writes [][2]string
}

func (s *recordingStorage) Set(ctx context.Context, key, value string) error {
	s.record(key, value)
	return s.MemoryStorage.Set(ctx, key, value)
}

func (s *recordingStorage) SetExpiring(ctx context.Context, key, value string, lifetime time.Duration) error {
	s.record(key, value)
	return s.MemoryStorage.SetExpiring(ctx, key, value, lifetime)
}

func (s *recordingStorage) record(key, value string) {
	s.mu.Lock()
	s.writes = append(s.writes, [2]string{key, value})
	s.mu.Unlock()
}

func TestEveryRecordTheGoManagerWritesValidatesAgainstTheSharedSchemas(t *testing.T) {
	tn := newTenant(t)
	storage := &recordingStorage{MemoryStorage: NewMemoryStorage()}
	m, clock := newManager(t, tn, nil, WithStorage(storage), WithLock(&ProcessLock{}))
	signIn(t, m)
	for range 3 {
		clock.Advance(15*time.Minute + 1700*time.Millisecond)
		if _, err := m.AccessToken(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	kinds := map[string]int{}
	for _, write := range storage.writes {
		key, raw := write[0], write[1]
		name := tokenstoreschema.ForKey(key)
		if name == "" {
			t.Fatalf("a write under %s, which no schema covers", key)
		}
		kinds[name]++
		if err := tokenstoreschema.Errors(t, name, raw); err != nil {
			t.Errorf("the %s written under %s does not validate: %v", name, key, err)
		}
	}
	if kinds[tokenstoreschema.TokenRecord] != 4 || kinds[tokenstoreschema.PendingRecord] != 1 || kinds[tokenstoreschema.IntentRecord] != 3 {
		t.Fatalf("writes by schema %v, want 4 token records, 1 pending record, 3 intents", kinds)
	}
}

// The check can fail: records no kit may write do not validate.
func TestTheSharedSchemasRefuseWhatNoManagerMayWrite(t *testing.T) {
	if err := tokenstoreschema.Errors(t, tokenstoreschema.TokenRecord, fullRecord); err != nil {
		t.Fatalf("a good record: %v", err)
	}
	for _, bad := range [][2]string{
		{`"seq":2`, `"seq":-1`},
		{`"received_at":1700000000000`, `"received_at":1700000000000.5`},
		{`"token_type":"Bearer"`, `"token_type":"mac"`},
		{`"expires_in":900`, `"expires_in":0`},
		{`"seq":2}`, `"seq":2,"id_token":"x"}`},
		{`"refresh_token":"rt_0123456789",`, ``},
	} {
		raw := strings.Replace(fullRecord, bad[0], bad[1], 1)
		if raw == fullRecord || tokenstoreschema.Errors(t, tokenstoreschema.TokenRecord, raw) == nil {
			t.Errorf("a record with %q validates", bad[1])
		}
	}
	intent := `{"fingerprint":"` + strings.Repeat("a", 64) + `","holder":"` + strings.Repeat("h", 43) + `","since":1700000000000,"pid":42,"host":"box"}`
	if err := tokenstoreschema.Errors(t, tokenstoreschema.IntentRecord, intent); err != nil {
		t.Fatalf("a good intent: %v", err)
	}
	if tokenstoreschema.Errors(t, tokenstoreschema.IntentRecord, strings.Replace(intent, `"host":"box"`, `"host":"a box"`, 1)) == nil {
		t.Error("an intent whose host holds a space validates")
	}
}
