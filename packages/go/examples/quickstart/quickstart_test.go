package main

// The README's quick start is this program (TestTheReadmeQuickStartIsThisProgram), and this program
// works as a user's: built in a module of its own outside the repository, which requires the SDK by
// its path with a replace to this checkout, it signs in against the sandbox through the loopback
// helper, prints the user, survives an expiry (one refresh) and logs out.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/tenanttest"
)

func TestTheReadmeQuickStartIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("```go\n"+string(program)+"```\n")) {
		t.Fatal("README.md's quick start must be examples/quickstart/main.go, character for character: copy it over")
	}
}

// goCommand is the go command running this test (go test puts its GOROOT's bin first on the PATH).
func goCommand(t *testing.T) string {
	path, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on the PATH")
	}
	return path
}

// outsideModule writes a module of its own in a temporary directory, with this program as its main
// package and the SDK required by its path, replaced by this checkout; returns the built binary.
func outsideModule(t *testing.T) string {
	dir := t.TempDir()
	sdk, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goMod := fmt.Sprintf("module example.com/my-cli\n\ngo 1.26.0\n\nrequire github.com/tenant-integration/sdk/packages/go v0.0.0\n\n"+
		"replace github.com/tenant-integration/sdk/packages/go => %s\n", sdk)
	program, _ := os.ReadFile("main.go")
	sums, _ := os.ReadFile(filepath.Join(sdk, "go.sum"))
	for name, content := range map[string][]byte{"go.mod": []byte(goMod), "main.go": program, "go.sum": sums} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	binary := filepath.Join(dir, "my-cli")
	build := exec.Command(goCommand(t), "build", "-o", binary, ".")
	build.Dir = dir
	// GOFLAGS=-mod=mod lets go complete go.mod and go.sum as a user's `go get` would; GOPROXY comes
	// from the environment.
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build outside the repository: %v\n%s", err, out)
	}
	return binary
}

type cli struct {
	binary string
	env    []string
}

// run runs the program; when browse is set, it plays the browser at the address the program prints.
func (c cli) run(t *testing.T, browse bool, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.binary, args...)
	cmd.Env = append(os.Environ(), c.env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		line := lines.Text()
		said.WriteString(line + "\n")
		if browse && strings.HasPrefix(line, "http") {
			// the sandbox auto-approves: its redirect brings the browser to the program's loopback server
			go func() {
				if response, err := http.Get(line); err == nil {
					_, _ = io.Copy(io.Discard, response.Body)
					response.Body.Close()
				}
			}()
		}
	}
	err := cmd.Wait()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, said.String())
	}
	return stdout.String(), err
}

func TestTheQuickStartBuiltOutsideTheRepositorySignsInSurvivesAnExpiryAndLogsOut(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs real processes")
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", listener.Addr().(*net.TCPAddr).Port)
	listener.Close()
	sandbox := tenanttest.Start(t, tenanttest.WithClients(tenanttest.Client{ID: "demo-cli", RedirectURIs: []string{redirect}}))
	tokens := filepath.Join(t.TempDir(), "my-cli", "tokens.json")
	program := cli{binary: outsideModule(t), env: []string{"TENANT_URL=" + sandbox.URL, "CLIENT_ID=demo-cli",
		"REDIRECT_URI=" + redirect, "TOKEN_FILE=" + tokens}}

	out, err := program.run(t, true)
	if err != nil || !strings.HasPrefix(out, "Signed in as {") {
		t.Fatalf("the first run: %q %v", out, err)
	}
	since, _ := sandbox.LastSeq()
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}
	// a later run, past the access token's 15 minutes: no sign-in, one refresh
	out, err = program.run(t, false)
	if err != nil || !strings.HasPrefix(out, "Signed in as {") {
		t.Fatalf("the run after the expiry: %q %v", out, err)
	}
	if n, err := sandbox.RefreshCount(since); err != nil || n != 1 {
		t.Fatalf("%d refreshes after one expiry (%v)", n, err)
	}

	if out, err := program.run(t, false, "logout"); err != nil {
		t.Fatalf("logout: %q %v", out, err)
	}
	events, _ := sandbox.Events(since)
	if last := events[len(events)-1]; last.Endpoint != "revoke" || last.Status != 200 {
		t.Fatalf("logout did not revoke: %+v", last)
	}
	if data, err := os.ReadFile(tokens); err == nil && bytes.Contains(data, []byte("access_token")) {
		t.Fatal("the tokens are still in the file after logout")
	}
}
