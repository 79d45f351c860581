package filestorage

// Writes of one process gathered into one rewrite of the file (group commit). Every Set, Delete and
// Take reads, changes and writes the whole file under <file>.write.lock, fsynced: one rewrite costs
// the same for one change as for two hundred. A server acting for many users (tokenmanager.Sessions)
// makes many at once (each refresh writes its intent, its tokens, and deletes its intent), and
// processes sharing the file take the write lock in turn: one rewrite per change would queue them
// all behind each other's fsyncs. So the changes that wait while a rewrite runs are applied together
// by the next one, in the order they came; each call still returns only once its change is durable
// (or with the error that kept it from being so).

import (
	"context"
	"sync"
	"time"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// change is one call's change of the file's data: it returns whether it changed anything.
type change struct {
	ctx   context.Context
	apply func(map[string]string) bool
	done  chan error
}

// writes is the queue of a Storage's changes waiting for a rewrite.
type writes struct {
	mu      sync.Mutex
	queue   []*change
	writing bool // a goroutine is rewriting the file and will take the queue after
}

// update applies apply to the file's data and writes the file when it changed anything, together
// with the changes of other goroutines that wait meanwhile.
func (s *Storage) update(ctx context.Context, apply func(map[string]string) bool) error {
	c := &change{ctx: ctx, apply: apply, done: make(chan error, 1)}
	s.writes.mu.Lock()
	s.writes.queue = append(s.writes.queue, c)
	lead := !s.writes.writing
	s.writes.writing = true
	s.writes.mu.Unlock()
	if lead {
		s.writeQueued(context.WithoutCancel(ctx))
	}
	return <-c.done
}

// writeQueued rewrites the file with the queued changes, then hands the next batch, if any, to a
// goroutine of its own, so that no caller waits for others' batches after its own.
func (s *Storage) writeQueued(ctx context.Context) {
	s.writes.mu.Lock()
	batch := s.writes.queue
	s.writes.queue = nil
	s.writes.mu.Unlock()
	s.rewrite(ctx, batch)
	s.writes.mu.Lock()
	defer s.writes.mu.Unlock()
	if len(s.writes.queue) == 0 {
		s.writes.writing = false
		return
	}
	go s.writeQueued(ctx)
}

// rewrite applies a batch under the write lock and writes the file once, then tells each change its
// outcome: the error of the lock, the read or the write, its own context's end (a change whose caller
// gave up is not applied), or nil.
func (s *Storage) rewrite(ctx context.Context, batch []*change) {
	outcomes := make([]error, len(batch))
	err := s.locked(ctx, "write", func(_ context.Context, _ tokenmanager.Held, file string) error {
		text, ok, err := s.readText(file)
		if err != nil {
			return err
		}
		data := map[string]string{}
		if ok {
			if what := problem(text); what == "" {
				data = decode(text)
			} else if err := s.setAside(file, what); !isCorrupt(err) {
				return err
			}
		}
		changed := false
		for i, c := range batch {
			if outcomes[i] = c.ctx.Err(); outcomes[i] == nil && c.apply(data) {
				changed = true
			}
		}
		if changed {
			dropPending(data, time.Now().UnixMilli())
			if err := writeDurably(file, data); err != nil {
				return err
			}
		}
		// After the write, not before: a refresh's write is the crash window, kept short.
		removeLeftovers(file)
		return nil
	})
	for i, c := range batch {
		if err != nil {
			outcomes[i] = err
		}
		c.done <- outcomes[i]
	}
}
