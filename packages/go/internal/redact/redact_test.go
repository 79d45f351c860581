package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

const canary = "tok/en+canary 0123456789=="

func TestScrubRemovesEveryPrintedFormOfASecret(t *testing.T) {
	forms := []string{
		canary,
		url.QueryEscape(canary),
		strings.ToLower(url.QueryEscape(canary)),
		url.PathEscape(canary),
		base64.StdEncoding.EncodeToString([]byte(canary)),
		base64.RawURLEncoding.EncodeToString([]byte(canary)),
	}
	for _, form := range forms {
		got := Scrub("sent "+form+" once", []string{canary})
		if strings.Contains(got, form) || !strings.Contains(got, Redacted) {
			t.Errorf("%q came out as %q", form, got)
		}
	}
}

func TestScrubRemovesCredentialsItWasNeverToldAbout(t *testing.T) {
	got := Scrub(`Authorization: Bearer abc.def-ghi and ?code=c0de1234&state=st4te567 {"refresh_token": "rt_zzz"}`, nil)
	for _, leak := range []string{"abc.def-ghi", "c0de1234", "st4te567", "rt_zzz"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q left in %q", leak, got)
		}
	}
	if !strings.Contains(got, "Bearer [redacted]") {
		t.Errorf("the scheme should stay readable: %q", got)
	}
}

func TestTextLeavesShortValuesAlone(t *testing.T) {
	if got := Text("a GET of /x", []string{"GET"}); got != "a GET of /x" {
		t.Fatalf("%q", got)
	}
}
