package tenanttest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// ahead is how far clock is ahead of the wall clock, to the second.
func ahead(clock func() time.Time) time.Duration {
	return time.Until(clock()).Round(time.Second)
}

// A process that did not start the sandbox (here: a manager that knows only its URL) follows the
// clock that another process (here: the test, through the sandbox it started) moves.
func TestAProcessThatDidNotStartTheSandboxFollowsItsClock(t *testing.T) {
	sandbox := tenanttest.Start(t)
	clock, err := tenanttest.FollowClock(sandbox.URL, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer clock.Close()
	manager, err := tokenmanager.New(tokenmanager.Config{BaseURL: sandbox.URL, ClientID: tenanttest.DefaultClientID,
		RedirectURI: tenanttest.DefaultRedirectURI, Scopes: []scope.Scope{scope.ProfileRead}}, tokenmanager.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	request, _ := manager.BeginAuthorization(ctx)
	callback, err := tenanttest.Approve(ctx, request.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manager.CompleteAuthorization(ctx, callback); err != nil {
		t.Fatal(err)
	}
	since, _ := sandbox.LastSeq()

	if err := sandbox.Advance(16 * time.Minute); err != nil { // another process moves the clock
		t.Fatal(err)
	}
	if err := clock.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := ahead(clock.Now); got != 16*time.Minute {
		t.Fatalf("the followed clock is %s ahead after Sync, want 16m0s", got)
	}
	if _, err := manager.AccessToken(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := sandbox.RefreshCount(since); n != 1 {
		t.Fatalf("%d refreshes after the other process moved the clock past expiry, want 1", n)
	}

	// Without a Sync: the background reads bring the next move within a few intervals.
	if err := sandbox.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ahead(clock.Now) != 76*time.Minute && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := ahead(clock.Now); got != 76*time.Minute {
		t.Fatalf("the followed clock is %s ahead, want 1h16m0s: the background reads did not follow", got)
	}
}

func TestFollowingWhatIsNotASandboxWithItsTestClockIsSandboxFailed(t *testing.T) {
	_, err := tenanttest.FollowClock("http://127.0.0.1:9", 0)
	var failure *tenanttest.Error
	if !errors.As(err, &failure) || failure.Code != tenanttest.CodeSandboxFailed {
		t.Fatalf("got %v, want SANDBOX_FAILED", err)
	}
}

func TestWithoutASandboxTheMessageSaysHowToRunOneFromACheckout(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(tenanttest.SandboxCommandEnv, "")
	t.Setenv("PATH", empty)
	t.Chdir(empty)
	_, err := tenanttest.Command()
	if err == nil || !strings.Contains(err.Error(), "packages/sandbox/dist/cli.js") || !strings.Contains(err.Error(), tenanttest.SandboxCommandEnv) {
		t.Fatalf("got %v, want how to run the sandbox from a checkout", err)
	}
}
