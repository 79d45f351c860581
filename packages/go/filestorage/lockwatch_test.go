package filestorage

// A waiter for a lock directory wakes on the two changes it waits for (lockwatch.go). Each pause
// below polls only after an hour: it returns early only if the watch woke it; the context's bound
// ends a broken wait instead of the test's timeout.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

func watched(t *testing.T) (file, lockPath string, watch *lockWatch) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "tokens.json")
	lockPath = file + ".refresh.lock"
	if err := os.Mkdir(lockPath, 0o700); err != nil {
		t.Fatal(err)
	}
	watch = watchLock(lockPath, file)
	if watch == nil {
		t.Skip("this system gives no file system watch; waiters only poll")
	}
	t.Cleanup(watch.close)
	return file, lockPath, watch
}

func wokenBefore(t *testing.T, watch *lockWatch, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := watch.pause(ctx, time.Hour); err != nil {
		t.Fatalf("the waiter was not woken when %s: %v", what, err)
	}
}

func TestAWaiterWakesWhenTheHolderRemovesTheLockDirectory(t *testing.T) {
	_, lockPath, watch := watched(t)
	removeLock(lockPath)
	wokenBefore(t, watch, "the lock directory was removed")
}

func TestAWaiterWakesWhenAnotherProcessStoresTokens(t *testing.T) {
	file, _, watch := watched(t)
	s, err := New(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(context.Background(), "tenant-integration:x:tokens", "{}"); err != nil { // a rename over the file
		t.Fatal(err)
	}
	wokenBefore(t, watch, "the token file was replaced")
}

func TestAWaiterIsNotWokenByOtherFilesBesideTheLock(t *testing.T) {
	file, lockPath, watch := watched(t)
	for _, event := range []fsnotify.Event{
		{Name: file + ".0123456789ab.tmp", Op: fsnotify.Create}, // a writer's temporary file
		{Name: file + ".write.lock", Op: fsnotify.Remove},       // the other lock
		{Name: lockPath + ".steal", Op: fsnotify.Remove},        // the takeover gate
		{Name: lockPath, Op: fsnotify.Create},                   // taken again: still held
	} {
		if watch.wakes(event) {
			t.Errorf("woken by %s", event)
		}
	}
	var none *lockWatch // no watch: the poll alone
	if err := none.pause(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
