// Command child is a process of the sessions fleet (package sessionfleet): it reads its configuration
// from SESSION_FLEET_CHILD, follows the sandbox's clock, says "ready", waits for "go" on its standard
// input, serves every session at once and prints its report as one JSON line. Never run by hand.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/tenant-integration/sdk/packages/go/internal/sessionfleet"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
)

func main() {
	var config sessionfleet.Child
	if err := json.Unmarshal([]byte(os.Getenv(sessionfleet.ChildEnv)), &config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	clock, err := tenanttest.FollowClock(config.Tenant, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer clock.Close()
	named := &http.Client{Transport: sessionfleet.Actor{Name: config.Name, Next: http.DefaultTransport}}
	sessions, err := config.NewSessions(clock.Now, named)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	if line, _ := bufio.NewReader(os.Stdin).ReadString('\n'); line != "go\n" {
		os.Exit(2)
	}
	report, _ := json.Marshal(config.Serve(sessions))
	fmt.Println(string(report))
}
