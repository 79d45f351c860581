package filestorage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/pendingrecord"
	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The refresh lock directory of each scope is the shared vectors' (beside the vector's file, here a
// temporary one): <file>.refresh.lock without a session, <file>.<h>.refresh.lock for a session.
func TestEachSessionsRefreshLockIsTheDirectoryOfTheSharedVectors(t *testing.T) {
	vectors := tokenstoreschema.ReadVectors(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, _ := New(path)
	for _, v := range vectors.Scopes {
		lock := s.Lock()
		if v.Session != nil {
			lock = s.SessionLock()
		}
		want := path + strings.TrimPrefix(v.FileLocks.Refresh, v.File)
		err := lock.Do(context.Background(), v.Names["lock"], func(context.Context, tokenmanager.Held) error {
			_, err := os.Stat(filepath.Join(want, "owner"))
			return err
		})
		if err != nil {
			t.Errorf("%s: %s is not the lock: %v", v.Scope, want, err)
		}
		if v.FileLocks.Write != v.File+".write.lock" {
			t.Errorf("%s: the write lock is %s", v.Scope, v.FileLocks.Write)
		}
	}
}

func TestOneSessionsHeldRefreshLockHoldsUpNoOtherSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, _ := New(path, WithLockTimeout(2*time.Second))
	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = s.SessionLock().Do(context.Background(), "tenant-integration:https://a.test:c:ada:lock", func(context.Context, tokenmanager.Held) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	defer close(release)
	started := time.Now()
	err := s.SessionLock().Do(context.Background(), "tenant-integration:https://a.test:c:grace:lock", func(context.Context, tokenmanager.Held) error { return nil })
	if err != nil || time.Since(started) > time.Second {
		t.Fatalf("the other session waited %s: %v", time.Since(started), err)
	}
}

func TestOfManyTakersOfOneKeyOneGetsTheValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, _ := New(path)
	ctx := context.Background()
	for round := range 5 {
		key := fmt.Sprintf("k%d", round)
		if err := s.SetExpiring(ctx, key, "v", time.Minute); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				other, _ := New(path) // another storage on the file: as another process would
				if _, ok, err := other.Take(ctx, key); err != nil {
					t.Error(err)
				} else if ok {
					mu.Lock()
					got++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if got != 1 {
			t.Fatalf("round %d: %d takers got the value", round, got)
		}
	}
}

func TestEachWriteDropsThePendingSignInsThatExpiredOrDoNotValidate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, _ := New(path)
	ctx := context.Background()
	pending := func(state string, expiresAt time.Time) string {
		return pendingrecord.Record{State: strings.Repeat(state, 43), Verifier: strings.Repeat("v", 64), ExpiresAt: expiresAt.UnixMilli()}.Text()
	}
	name := func(n int) string { return fmt.Sprintf("tenant-integration:https://a.test:c:pending:%032x", n) }
	for key, value := range map[string]string{
		name(1): pending("a", time.Now().Add(-time.Second)), // expired
		name(2): `{"state":"not a record"}`,                 // does not validate
		name(3): pending("b", time.Now().Add(time.Hour)),    // pending
		"tenant-integration:https://a.test:c:tokens": "not a record", // not a pending sign-in: not the file's to judge
	} {
		if err := s.Set(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Set(ctx, "another", "write"); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	for key, kept := range map[string]bool{name(1): false, name(2): false, name(3): true, "tenant-integration:https://a.test:c:tokens": true} {
		if strings.Contains(string(raw), key) != kept {
			t.Errorf("%s kept: %v", key, !kept)
		}
	}
}
