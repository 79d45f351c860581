package errtext_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/tenant-integration/sdk/packages/go/internal/errtext"
)

func TestAPrintedErrorSaysWhyAsAnErrorfChainDoes(t *testing.T) {
	denied := &fs.PathError{Op: "open", Path: "/home/u/.config/tokens.json", Err: syscall.EACCES}
	for _, c := range []struct {
		code, message string
		cause         error
		want          string
	}{
		{"IO_FAILED", "cannot read the token file", denied, "IO_FAILED: cannot read the token file: open /home/u/.config/tokens.json: permission denied"},
		{"STORAGE_FAILED", "the token storage failed", fmt.Errorf("IO_FAILED: %w", denied), "STORAGE_FAILED: the token storage failed: IO_FAILED: open /home/u/.config/tokens.json: permission denied"},
		{"TRANSIENT", "no answer (1 attempt)", errors.New("dial tcp 127.0.0.1:4020: connect: connection refused"), "TRANSIENT: no answer (1 attempt): dial tcp 127.0.0.1:4020: connect: connection refused"},
		{"NOT_SIGNED_IN", "", nil, "NOT_SIGNED_IN"},
		{"COMMAND_FAILED", "GET failed (boom)", errors.New("boom"), "COMMAND_FAILED: GET failed (boom)"}, // said once
	} {
		if got := errtext.Text(c.code, c.message, c.cause); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
