package redisstorage

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// reply is an error reply of Redis, as go-redis gives it (a redis.Error).
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

var _ redis.Error = reply("")

func TestWhatAFailedCommandTellsOfTheClustersLayout(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		err        error
		outcome    outcome
		mayHaveRun bool
	}{
		{refused, notRun, false},
		{fmt.Errorf("wrapped: %w", refused), notRun, false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: context.DeadlineExceeded}, settled, true}, // the caller's deadline, not the node
		{reply("MOVED 3999 127.0.0.1:6381"), notRun, false},
		{reply("ASK 3999 127.0.0.1:6381"), notRun, false},
		{reply("CLUSTERDOWN The cluster is down"), notRun, false},
		{reply("TRYAGAIN Multiple keys request during rehashing of slot"), notRun, false},
		{reply("READONLY You can't write against a read only replica."), notRun, false},
		{reply("LOADING Redis is loading the dataset in memory"), notRun, false},
		{io.EOF, unanswered, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, unanswered, true},
		{&noReply{time.Second}, settled, true}, // within's deadline: sent, no reply
		{context.Canceled, settled, true},
		{&afterTries{timeout: &noReply{time.Second}, last: reply("CLUSTERDOWN The cluster is down")}, settled, true},
		{reply("WRONGTYPE Operation against a key holding the wrong kind of value"), settled, false},
		{reply("NOPERM this user has no permissions to run the 'set' command"), settled, false},
		{redis.Nil, settled, false},
	}
	for _, c := range cases {
		if got := classify(c.err); got != c.outcome {
			t.Errorf("classify(%v) = %d, want %d", c.err, got, c.outcome)
		}
		if got := mayHaveRun(c.err); got != c.mayHaveRun {
			t.Errorf("mayHaveRun(%v) = %v, want %v", c.err, got, c.mayHaveRun)
		}
	}
}

func TestAnErrorThatOutlivesTheRetriesSaysWhy(t *testing.T) {
	for text, says := range map[string]string{
		"MOVED 3999 127.0.0.1:6381":                                         "resharding",
		"CLUSTERDOWN The cluster is down":                                   "the Redis Cluster is down",
		"WRONGTYPE Operation against a key holding the wrong kind of value": "a value the kit did not write",
	} {
		err := failed(tokenmanager.CodeCommandFailed, "GET", "app:tenant-integration:{https://acme.tenant.test:demo}:intent", reply(text))
		// and when the command's deadline passed while it was run again
		late := failed(tokenmanager.CodeCommandFailed, "GET", "k", &afterTries{timeout: &noReply{5 * time.Second}, last: reply(text)})
		if !strings.Contains(late.Error(), says) || !strings.Contains(late.Error(), "no reply within 5s") {
			t.Errorf("%s, after tries: %v", text, late)
		}
		if !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "app:tenant-integration:{https://acme.tenant.test:demo}:intent") {
			t.Errorf("%s: %v", text, err)
		}
	}
}
