package sessionfleet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The fleet: this many sessions, served by this many processes at once, through this many expiries.
const (
	sessionCount = 200
	processes    = 5
	expiries     = 2
	firstUser    = 42 // the sandbox's first user id; --users makes 42, 43, …
)

func TestManySessionsOnOneTokenFileAcrossProcessesAfterExpiry(t *testing.T) {
	dir := t.TempDir()
	fleet(t, "file", func(c *Child) { c.Path = filepath.Join(dir, "tokens.json") })
}

func TestManySessionsOnOneRedisAcrossProcessesAfterExpiry(t *testing.T) {
	addr := startRedis(t)
	fleet(t, "redis", func(c *Child) { c.Addr = addr })
}

// fleet signs in sessionCount sessions (each as its own sandbox user), then, after each of expiries
// expiries, has processes processes serve every session at once, and checks the ledger.
func fleet(t *testing.T, storage string, place func(*Child)) {
	binary := buildChild(t)
	sandbox := tenanttest.Start(t, tenanttest.WithArgs("--users", fmt.Sprint(sessionCount+1)))
	registered := sandbox.Clients[0]
	base := Child{Tenant: sandbox.URL, ClientID: registered.ID, RedirectURI: registered.RedirectURIs[0], Storage: storage}
	place(&base)
	sessions, err := base.NewSessions(sandbox.Now, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base.Sessions = map[string]string{}
	for i := range sessionCount {
		id, user := sessionID(i), fmt.Sprint(firstUser+i)
		base.Sessions[id] = user
		if _, err := signIn(ctx, sessions, id, user, ""); err != nil {
			t.Fatalf("signing %s in: %v", id, err)
		}
	}
	// A sign-in approved and left for the fleet: its callback, brought by another browser.
	replayed, err := sessions.BeginSignIn(ctx, "replayed", "")
	if err != nil {
		t.Fatal(err)
	}
	replay, err := tenanttest.Approve(ctx, replayed.URL+fmt.Sprintf("&sandbox_user=%d", firstUser+sessionCount))
	if err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= expiries; round++ {
		if err := sandbox.Advance(16 * time.Minute); err != nil {
			t.Fatal(err)
		}
		runFleet(t, binary, base, round == 1, replay)
		checkLedger(t, sandbox, base.Sessions, round)
	}
	// The replayed callback was used up by the refusal: its own browser cannot complete it either.
	_, err = sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: replay, Binding: replayed.Binding})
	if !errors.Is(err, tokenmanager.ErrNoPendingSignIn) {
		t.Fatalf("the replayed sign-in after its refusal: %v", err)
	}
	events, _ := sandbox.Events(0)
	exchanges := 0
	for _, e := range events {
		if e.GrantType != nil && *e.GrantType == "authorization_code" {
			exchanges++
		}
	}
	if exchanges != sessionCount {
		t.Fatalf("%d code exchanges for %d sign-ins: the replayed callback was exchanged", exchanges, sessionCount)
	}
	checkStored(t, base, sandbox.URL)
}

// sessionID is the id of session i: the forms apps use (integers, e-mail addresses, subjects, UUIDs).
func sessionID(i int) string {
	switch i % 4 {
	case 0:
		return fmt.Sprint(1000 + i)
	case 1:
		return fmt.Sprintf("user%d@example.org", i)
	case 2:
		return fmt.Sprintf("auth0|%012x", i)
	}
	return fmt.Sprintf("%08x-e29b-41d4-a716-446655440000", i)
}

// signIn signs session id in as the sandbox's user through its auto-approve, bound to binding.
func signIn(ctx context.Context, sessions *tokenmanager.Sessions, id, user, binding string) (tokenmanager.SignedIn, error) {
	begun, err := sessions.BeginSignIn(ctx, id, binding)
	if err != nil {
		return tokenmanager.SignedIn{}, err
	}
	callback, err := tenanttest.Approve(ctx, begun.URL+"&sandbox_user="+user)
	if err != nil {
		return tokenmanager.SignedIn{}, err
	}
	return sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: begun.Binding, SessionID: id})
}

// runFleet starts the processes, lets them go at once, and checks that each served every session
// its own user.
func runFleet(t *testing.T, binary string, base Child, withReplay bool, replay string) {
	type running struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		lines  *bufio.Scanner
		stderr *strings.Builder
	}
	var fleet []running
	for i := range processes {
		config := base
		config.Name = fmt.Sprintf("p%d", i+1)
		if i == 0 && withReplay {
			config.Replay = replay
		}
		raw, _ := json.Marshal(config)
		cmd := exec.Command(binary)
		cmd.Env = append(os.Environ(), ChildEnv+"="+string(raw))
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		stderr := &strings.Builder{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 1<<20), 1<<20)
		if !lines.Scan() || lines.Text() != "ready" {
			t.Fatalf("process %d did not start: %q %s", i+1, lines.Text(), stderr)
		}
		fleet = append(fleet, running{cmd, stdin, lines, stderr})
	}
	for _, p := range fleet { // all at once
		_, _ = io.WriteString(p.stdin, "go\n")
	}
	for i, p := range fleet {
		var r Report
		if !p.lines.Scan() || json.Unmarshal(p.lines.Bytes(), &r) != nil {
			t.Fatalf("process %d answered %q; stderr: %s", i+1, p.lines.Text(), p.stderr)
		}
		if r.Served != sessionCount || len(r.Failures) > 0 {
			t.Errorf("process %d served %d of %d sessions; failures: %v", i+1, r.Served, sessionCount, r.Failures)
		}
		_ = p.cmd.Wait()
	}
}

// checkLedger: after round expiries, every session's family was refreshed round times, each refresh
// token presented once and accepted, none reused, each family its own user's.
func checkLedger(t *testing.T, sandbox *tenanttest.Sandbox, sessions map[string]string, round int) {
	ledger, err := sandbox.Ledger()
	if err != nil {
		t.Fatal(err)
	}
	if len(ledger.Reuses) > 0 {
		t.Fatalf("round %d: %d refresh tokens presented again (revoked families)", round, len(ledger.Reuses))
	}
	perFamily := map[string]int{}
	for _, token := range ledger.RefreshTokens {
		if len(token.Presentations) != 1 || token.Presentations[0].Outcome != "ok" || token.Family == nil {
			t.Fatalf("round %d: refresh token %s… presented %d times: %+v", round, token.Fingerprint[:8], len(token.Presentations), token.Presentations)
		}
		perFamily[*token.Family]++
	}
	users := map[string]bool{}
	for _, family := range ledger.Families {
		if family.Revoked {
			t.Fatalf("round %d: family %s revoked by %v", round, family.ID, *family.RevokedBy)
		}
		if refreshes, user := perFamily[family.ID], fmt.Sprint(family.User); refreshes != round {
			if user != fmt.Sprint(firstUser+sessionCount) { // the replayed sign-in's, never exchanged, has no family
				t.Errorf("round %d: the family of user %s was refreshed %d times", round, user, refreshes)
			}
		} else {
			users[user] = true
		}
	}
	if len(users) != len(sessions) {
		t.Fatalf("round %d: %d users refreshed once per expiry, of %d sessions", round, len(users), len(sessions))
	}
}

// checkStored: the storage holds each session's tokens under its own name and nothing else (no
// record of an adversarial id, no pending sign-in, no intent or lock left behind).
func checkStored(t *testing.T, base Child, origin string) {
	want := map[string]bool{}
	for id := range base.Sessions {
		want["tenant-integration:"+origin+":"+base.ClientID+":"+id+":tokens"] = true
	}
	var got []string
	switch base.Storage {
	case "file":
		raw, err := os.ReadFile(base.Path)
		if err != nil {
			t.Fatal(err)
		}
		var data map[string]string
		_ = json.Unmarshal(raw, &data)
		for key := range data {
			got = append(got, key)
		}
		if errs := tokenstoreschema.Errors(t, tokenstoreschema.TokenFile, string(raw)); errs != nil {
			t.Errorf("the token file does not validate: %v", errs)
		}
	case "redis":
		client := redis.NewClient(&redis.Options{Addr: base.Addr})
		defer client.Close()
		got = client.Keys(context.Background(), "*").Val()
		keys := map[string]bool{}
		for name := range want {
			keys[redisstorage.Key("", name)] = true
		}
		want = keys
	}
	for _, key := range got {
		if !want[key] {
			t.Errorf("the storage holds %s", key)
		}
	}
	if len(got) != len(base.Sessions) {
		t.Fatalf("the storage holds %d records for %d sessions", len(got), len(base.Sessions))
	}
}

// buildChild builds the child command without the race detector (a user's build: the fleet tests
// coordination, and the race detector, which makes every process several times slower, belongs to
// the unit tests) and returns its path.
func buildChild(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the fleet is real processes")
	}
	binary := filepath.Join(t.TempDir(), "child")
	build := exec.Command("go", "build", "-o", binary, "./child")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./child: %v\n%s", err, out)
	}
	return binary
}

// startRedis starts a redis-server on a free loopback port for the test, stopped by its pid after.
func startRedis(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: redis-server is a real process")
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	cmd := exec.Command(path, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	probe := redis.NewClient(&redis.Options{Addr: addr})
	defer probe.Close()
	for start := time.Now(); probe.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("redis-server did not answer")
		}
	}
	return addr
}
