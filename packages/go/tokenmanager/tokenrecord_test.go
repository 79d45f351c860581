package tokenmanager

import (
	"context"
	"strings"
	"testing"
)

const fullRecord = `{"access_token":"at_0123456789","refresh_token":"rt_0123456789","token_type":"Bearer","expires_in":900,` +
	`"received_at":1700000000000,"id":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","session":"BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB","seq":2}`

func TestAStoredRecordWithEveryRequiredFieldIsASession(t *testing.T) {
	record := parseRecord(fullRecord, true)
	if record == nil || record.seq() != 2 || record.Session[0] != 'B' {
		t.Fatalf("%+v", record)
	}
	if record.serialize() != fullRecord {
		t.Fatalf("written back differently:\n%s", record.serialize())
	}
}

// Regression guard: before the first release there are no records of "earlier versions" to read; a
// record without session or seq (or id, or received_at) does not validate, so it is no session.
func TestARecordWithoutARequiredFieldIsNoSession(t *testing.T) {
	for _, field := range []string{`"session":"BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",`, `,"seq":2`, `"id":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",`, `"received_at":1700000000000,`} {
		raw := strings.Replace(fullRecord, field, "", 1)
		if raw == fullRecord {
			t.Fatalf("%s not in the record", field)
		}
		if record := parseRecord(raw, true); record != nil {
			t.Errorf("read without %s", field)
		}
	}
	for _, bad := range []string{`"seq":-1`, `"seq":1.5`, `"seq":"2"`} {
		if parseRecord(strings.Replace(fullRecord, `"seq":2`, bad, 1), true) != nil {
			t.Errorf("read with %s", bad)
		}
	}
}

func TestRecordsAreWrittenAsTheOtherKitsWriteThem(t *testing.T) {
	tn := newTenant(t)
	storage := NewMemoryStorage()
	m, _ := newManager(t, tn, nil, WithStorage(storage))
	signIn(t, m)
	raw, ok, _ := storage.Get(context.Background(), "tenant-integration:"+tn.URL+":c:tokens")
	if !ok {
		t.Fatal("no record")
	}
	keys := []string{`{"access_token":`, `,"refresh_token":`, `,"token_type":"Bearer","expires_in":900,"received_at":`, `,"id":`, `,"session":`, `,"seq":0}`}
	at := 0
	for _, key := range keys {
		i := strings.Index(raw[at:], key)
		if i < 0 {
			t.Fatalf("record %q lacks %q in order", strings.ReplaceAll(raw, "secret", "…"), key)
		}
		at += i + len(key)
	}
	record := parseRecord(raw, true)
	if record == nil || record.ID != record.Session || len(record.ID) != 43 {
		t.Fatal("record does not parse back")
	}
}
