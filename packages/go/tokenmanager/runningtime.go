package tokenmanager

// A request timeout that counts only the time this process ran (spec/token-store/README.md, step 6;
// the TypeScript kit's running-time.ts, the Python kit's _running_time.py).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

type answer struct {
	status int
	text   string
	header http.Header
	err    error
}

// within sends the request and reads the answer, bounded by the request timeout counted in time the
// process ran: a tick that comes far later than asked means the process was stopped (SIGSTOP, a
// suspended machine, a debugger); that time is not the tenant's, and the tick only waits again, so
// that an answer that arrived meanwhile is read.
func (m *Manager) within(ctx context.Context, path, body, contentType string) (int, string, http.Header, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	request, err := http.NewRequestWithContext(ctx, http.MethodPost, m.origin+path, strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	request.Header.Set("Accept", "application/json")
	request.Header.Set("Content-Type", contentType)
	done := make(chan answer, 1)
	go func() {
		response, err := m.http.Do(request)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer response.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(response.Body, maxBody))
		done <- answer{status: response.StatusCode, text: string(raw), header: response.Header, err: err}
	}()
	timeout := m.o.requestTimeout
	step := min(timeout, 250*time.Millisecond)
	var ran time.Duration
	last := time.Now()
	for {
		timer := time.NewTimer(min(step, timeout-ran))
		select {
		case a := <-done:
			timer.Stop()
			return a.status, a.text, a.header, a.err
		case <-ctx.Done():
			timer.Stop()
			return 0, "", nil, ctx.Err()
		case at := <-timer.C:
			gap := at.Sub(last)
			last = at
			if gap > step+time.Second {
				continue // stopped meanwhile: not the tenant's time
			}
			ran += gap
			if ran >= timeout {
				return 0, "", nil, errTimeout
			}
		}
	}
}

var errTimeout = errors.New("no answer within the request timeout")
