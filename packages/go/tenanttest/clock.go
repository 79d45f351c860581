package tenanttest

// The sandbox's test clock followed by a process that did not start the sandbox: a program under
// test that a test runs as a child, a worker of a fleet, a service started by the test's harness.
// The same follower as the TypeScript kit's followSandboxClock (@tenant-integration/sandbox/testing)
// and the Python kit's follow_sandbox_clock (tenant_integration.testing).

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultFollowInterval is how often a Clock reads the sandbox's clock in the background.
const DefaultFollowInterval = 100 * time.Millisecond

// Clock is the test clock of a sandbox this process did not start, followed by its URL: the wall
// clock plus the sandbox's offset, read from GET /__sandbox/clock when the Clock is made, every
// interval after (DefaultFollowInterval), and at each Sync. So every process's moves of the clock
// (Sandbox.Advance in the test, POST /__sandbox/clock) reach this one within an interval, or at
// once after Sync. Give Now to the token manager under test: tokenmanager.WithClock(clock.Now).
// Safe for concurrent use; Close stops the reads.
type Clock struct {
	url    string
	http   *http.Client
	mu     sync.Mutex
	offset time.Duration
	stop   chan struct{}
	once   sync.Once
}

// FollowClock follows the test clock of the sandbox at url (e.g. the TENANT_URL a test gave this
// process); interval 0 is DefaultFollowInterval.
// Errors: SANDBOX_FAILED when the sandbox does not answer, or runs without its test clock
// (--test-clock), the message says which.
func FollowClock(url string, interval time.Duration) (*Clock, error) {
	if interval <= 0 {
		interval = DefaultFollowInterval
	}
	c := &Clock{url: strings.TrimRight(url, "/"), http: &http.Client{Timeout: 5 * time.Second}, stop: make(chan struct{})}
	if err := c.Sync(); err != nil {
		return nil, err
	}
	go c.follow(interval)
	return c, nil
}

func (c *Clock) follow(interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ticker.C:
			_ = c.Sync() // a read that fails keeps the last offset; the next tick tries again
		}
	}
}

// Now is the sandbox's time as last read: the wall clock plus its offset.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Sync reads the sandbox's clock now (GET /__sandbox/clock). The offset only moves forward, as the
// sandbox's does. Errors: SANDBOX_FAILED.
func (c *Clock) Sync() error {
	offset, err := readOffset(c.http, c.url)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.offset = max(c.offset, offset)
	c.mu.Unlock()
	return nil
}

// Close stops the background reads (not the sandbox); safe to call twice.
func (c *Clock) Close() error {
	c.once.Do(func() { close(c.stop) })
	return nil
}

// readOffset is the offset of the sandbox's test clock at url.
func readOffset(client *http.Client, url string) (time.Duration, error) {
	response, err := client.Get(url + "/__sandbox/clock")
	if err != nil {
		return 0, sandboxFailed(err, "cannot read the clock of the sandbox at %s", url)
	}
	defer response.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(response.Body, 1<<16))
	var body struct {
		OffsetSeconds *float64 `json:"offsetSeconds"`
	}
	if response.StatusCode != http.StatusOK || json.Unmarshal(raw, &body) != nil || body.OffsetSeconds == nil {
		return 0, sandboxFailed(nil, "GET %s/__sandbox/clock answered HTTP %d without a clock: is it the sandbox, started with --test-clock?", url, response.StatusCode)
	}
	return time.Duration(*body.OffsetSeconds * float64(time.Second)), nil
}
