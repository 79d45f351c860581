package tenanttest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/tenant-integration/sdk/packages/go/tenanttest"
)

// In a test, tenanttest.New(t) does all of this in one line and stops the sandbox after the test;
// outside go test, StartSandbox and NewTenant give the same pieces. The sandbox is a real process
// (Node.js; see the package doc for how it is found).
func ExampleNewTenant() {
	sandbox, err := tenanttest.StartSandbox()
	if err != nil {
		panic(err) // SANDBOX_FAILED: the message says how to get the sandbox
	}
	defer sandbox.Close()
	tenant, err := tenanttest.NewTenant(context.Background(), sandbox) // signed in, on the sandbox's clock
	if err != nil {
		panic(err)
	}
	if err := sandbox.Advance(16 * time.Minute); err != nil { // past the 15-minute access token
		panic(err)
	}
	response, err := tenant.Client.Get(tenant.URL("/api/v1/auth/user")) // refreshed first
	if err != nil {
		panic(err)
	}
	response.Body.Close()
	refreshes, _ := tenant.RefreshCount()
	fmt.Println(response.Status, "after", refreshes, "refresh")
	// Output: 200 OK after 1 refresh
}

// A process that did not start the sandbox (a program under test, a worker of a fleet) follows its
// test clock by its URL. Here an httptest server stands for a sandbox whose clock another process
// moved 15 minutes forward.
func ExampleFollowClock() {
	sandbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"offsetSeconds":900}`) // GET /__sandbox/clock
	}))
	defer sandbox.Close()

	clock, err := tenanttest.FollowClock(sandbox.URL, 0) // e.g. os.Getenv("TENANT_URL")
	if err != nil {
		panic(err) // SANDBOX_FAILED: not a sandbox, or one without --test-clock
	}
	defer clock.Close()
	// tokenmanager.WithClock(clock.Now) puts the manager under test on the sandbox's time.
	fmt.Println(time.Until(clock.Now()).Round(time.Minute))
	// Output: 15m0s
}
