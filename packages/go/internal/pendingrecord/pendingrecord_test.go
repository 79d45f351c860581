package pendingrecord_test

import (
	"testing"

	"github.com/tenant-integration/sdk/packages/go/internal/pendingrecord"
	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
)

func TestPendingRecordsAreWrittenAndReadAsTheSharedVectorsSay(t *testing.T) {
	vectors := tokenstoreschema.ReadVectors(t)
	for _, v := range vectors.PendingRecords {
		record, ok := pendingrecord.Parse(v.Text)
		if ok != v.Valid {
			t.Errorf("%s: read as valid %v", v.Note, ok)
			continue
		}
		if err := tokenstoreschema.Errors(t, tokenstoreschema.PendingRecord, v.Text); (err == nil) != v.Valid {
			t.Errorf("%s: the schema says %v", v.Note, err)
		}
		if v.Record == nil {
			continue
		}
		written := pendingrecord.Record{State: v.Record.State, Verifier: v.Record.Verifier, ExpiresAt: v.Record.ExpiresAt}
		if v.Record.SessionID != nil {
			written.SessionID = *v.Record.SessionID
		}
		if v.Record.Browser != nil {
			written.Browser = *v.Record.Browser
		}
		if text := written.Text(); text != v.Text {
			t.Errorf("%s: written as\n %s\nwant\n %s", v.Note, text, v.Text)
		}
		if record != written {
			t.Errorf("%s: read as %+v", v.Note, record)
		}
	}
	for _, text := range []string{`[]`, `null`, `{"state":"x"}`, `{"state":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk","expiresAt":1.5}`,
		`{"state":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk","expiresAt":1,"sessionId":null}`} {
		if _, ok := pendingrecord.Parse(text); ok {
			t.Errorf("%s read as a record", text)
		}
	}
}

func TestOnlyAPendingSignInsNameIsAPendingName(t *testing.T) {
	vectors := tokenstoreschema.ReadVectors(t)
	for _, v := range vectors.Pending {
		if !pendingrecord.IsName(v.Name) {
			t.Errorf("%s is not a pending name", v.Name)
		}
	}
	for _, v := range vectors.Scopes {
		for _, name := range v.Names {
			if pendingrecord.IsName(name) {
				t.Errorf("%s is a pending name", name)
			}
		}
	}
}
