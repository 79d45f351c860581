package filestorage

// The lock directory of the token file on a disk that stops answering (issue 36: a network disk): a
// holder that lets its lock go while the disk does not answer cannot remove the directory, which
// names it, a live owner, that nobody else may take over; it removes it itself once the disk answers.
// The disk's outage is a symbolic link swapped, in one rename, for a link to a regular file: every
// access under it fails (ENOTDIR), as the conformance suite's `disk: unreachable` does (and as
// dir-lock.test.ts and test_file_lock_unreachable.py do).

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// networkDisk is a token file behind a link to the directory disk, which away makes unreachable and
// back reachable again.
type networkDisk struct {
	t                 *testing.T
	file, onDisk      string
	state, disk, dead string
}

func newNetworkDisk(t *testing.T) *networkDisk {
	root := t.TempDir()
	d := &networkDisk{t: t, state: filepath.Join(root, "state"), disk: filepath.Join(root, "disk"), dead: filepath.Join(root, "unreachable")}
	if err := os.Mkdir(d.disk, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.dead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d.back()
	d.file = filepath.Join(d.state, "tokens.json")
	d.onDisk = filepath.Join(d.disk, "tokens.json.refresh.lock")
	return d
}

func (d *networkDisk) link(target string) {
	if err := os.Symlink(target, d.state+".next"); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Rename(d.state+".next", d.state); err != nil {
		d.t.Fatal(err)
	}
}

func (d *networkDisk) away() { d.link(d.dead) }
func (d *networkDisk) back() { d.link(d.disk) }

func (d *networkDisk) holdWhileAway() {
	err := hold(context.Background(), d.file+".refresh.lock", d.file, 2*time.Second, 3*time.Second, nil, true,
		func(context.Context, tokenmanager.Held) error { d.away(); return nil })
	if err != nil {
		d.t.Fatal(err)
	}
	d.back()
	// Left behind, naming this live process: never taken over by another.
	if _, err := os.Stat(d.onDisk); err != nil {
		d.t.Fatalf("the lock directory is not there when the disk answers again: %v", err)
	}
}

func TestALockLetGoWhileTheDiskDoesNotAnswerIsRemovedByItsHolderOnceItAnswersUnasked(t *testing.T) {
	d := newNetworkDisk(t)
	d.holdWhileAway()
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(d.onDisk); !os.IsNotExist(err) {
		t.Fatalf("the lock directory its holder let go is still there a second after the disk answered (%v): every process waits for it until LOCK_TIMEOUT", err)
	}
}

func TestALockLeftBehindIsRemovedAtOnceWhenItsHolderTakesItAgainInsteadOfWaitingForItself(t *testing.T) {
	d := newNetworkDisk(t)
	d.holdWhileAway()
	taken := false
	// A lock timeout shorter than the second between two tries of the directory left behind.
	err := hold(context.Background(), d.file+".refresh.lock", d.file, 2*time.Second, 300*time.Millisecond, nil, true,
		func(context.Context, tokenmanager.Held) error { taken = true; return nil })
	if err != nil || !taken {
		t.Fatalf("the holder waited for its own lock left behind: %v", err)
	}
}
