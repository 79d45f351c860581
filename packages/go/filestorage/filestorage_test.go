package filestorage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/procid"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

func TestWritesA0600FileInA0700DirectoryAndKeepsEveryKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cli", "tokens.json")
	s, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Set(ctx, "a", "1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "b", "<2>"); err != nil {
		t.Fatal(err)
	}
	if value, ok, err := s.Get(ctx, "b"); err != nil || !ok || value != "<2>" {
		t.Fatalf("get %q %v %v", value, ok, err)
	}
	raw, _ := os.ReadFile(path)
	if string(raw) != `{"a":"1","b":"<2>"}` {
		t.Fatalf("file %s", raw)
	}
	file, _ := os.Stat(path)
	dir, _ := os.Stat(filepath.Dir(path))
	if file.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", file.Mode(), dir.Mode())
	}
}

func TestTheLockDirectoryNamesItsOwnerAsTheOtherKitsDo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, _ := New(path)
	err := s.Lock().Do(context.Background(), "x", func(ctx context.Context, held tokenmanager.Held) error {
		raw, err := os.ReadFile(path + ".refresh.lock/owner")
		if err != nil {
			return err
		}
		pattern := fmt.Sprintf(`^\{"pid":%d,"host":"%s","id":"[0-9a-f]{32}","since":\d+\}$`, os.Getpid(), regexp.QuoteMeta(procid.Host()))
		if !regexp.MustCompile(pattern).Match(raw) {
			return fmt.Errorf("owner file %s", raw)
		}
		if !held.IsHeld(ctx) {
			return errors.New("not held")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".refresh.lock"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the lock directory was left behind")
	}
}

// ownedBy makes a lock directory whose owner file names pid on this host.
func ownedBy(t *testing.T, lockPath string, pid int) {
	t.Helper()
	if err := os.Mkdir(lockPath, 0o700); err != nil {
		t.Fatal(err)
	}
	owner := fmt.Sprintf(`{"pid":%d,"host":%q,"id":"%032x","since":%d}`, pid, procid.Host(), 1, time.Now().UnixMilli())
	if err := os.WriteFile(filepath.Join(lockPath, "owner"), []byte(owner), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTakesOverAtOnceTheLockOfAProcessThatHasExited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to make a dead pid")
	}
	ownedBy(t, path+".refresh.lock", dead.Process.Pid)
	s, _ := New(path, WithLockTimeout(time.Second))
	started := time.Now()
	if err := s.Lock().Do(context.Background(), "x", func(context.Context, tokenmanager.Held) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(started); waited > 500*time.Millisecond {
		t.Fatalf("waited %s for a dead holder", waited)
	}
}

func TestNeverTakesOverTheLockOfALiveHolderHoweverStaleAndNamesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Skip("no `sleep`")
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	lockPath := path + ".refresh.lock"
	ownedBy(t, lockPath, sleeper.Process.Pid)
	old := time.Now().Add(-time.Minute)
	_ = os.Chtimes(lockPath, old, old)
	s, _ := New(path, WithStaleAfter(2*time.Second), WithLockTimeout(300*time.Millisecond))
	err := s.Lock().Do(context.Background(), "x", func(context.Context, tokenmanager.Held) error { return nil })
	if !errors.Is(err, tokenmanager.ErrLockTimeout) || !strings.Contains(err.Error(), fmt.Sprint(sleeper.Process.Pid)) {
		t.Fatalf("err %v", err)
	}
}

func TestACorruptFileIsMovedAsideAndReportedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := New(path)
	_, _, err := s.Get(context.Background(), "k")
	var failure *tokenmanager.Error
	if !errors.As(err, &failure) || failure.Code != tokenmanager.CodeFileCorrupt || failure.MovedTo == "" {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(failure.MovedTo); err != nil {
		t.Fatal("the corrupt file was not kept")
	}
	if _, ok, err := s.Get(context.Background(), "k"); ok || err != nil {
		t.Fatalf("second read: %v %v", ok, err)
	}
}
