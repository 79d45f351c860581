package transport_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/tenant-integration/sdk/packages/go/transport"
)

// New stacks the retry and logging layers over the token manager's Transport (here over
// http.DefaultTransport). A GET answered 503 is sent again after the answer's Retry-After.
func ExampleNew() {
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer api.Close()

	rt, err := transport.New(nil, // in your code: transport.New(manager.Transport(nil), ...)
		transport.WithRetries(2),
		transport.WithBaseDelay(10*time.Millisecond),
		transport.WithOnRetry(func(retry transport.RetryInfo) { fmt.Println("attempt", retry.Attempt, "after HTTP", retry.Status) }))
	if err != nil {
		panic(err) // INVALID_OPTIONS
	}
	client := &http.Client{Transport: rt}
	response, err := client.Get(api.URL + "/api/v1/auth/user")
	if err != nil {
		panic(err) // *transport.Error: NETWORK_ERROR, TIMEOUT or ABORTED
	}
	defer response.Body.Close()
	fmt.Println(response.Status)
	// Output:
	// attempt 2 after HTTP 503
	// 200 OK
}
