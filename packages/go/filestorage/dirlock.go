package filestorage

// The lock directory protocol shared with the TypeScript kit (proper-lockfile plus an owner file,
// packages/token-manager/src/node/dir-lock.ts) and the Python kit (storage/_dir_lock.py):
//
//   - the lock is the directory <file>.refresh.lock (or .write.lock), taken by an atomic mkdir;
//   - its holder writes the owner file right after the mkdir:
//     {"pid":<int>,"host":"<host name>","id":"<32 lowercase hex>","since":<ms>}, and removes it right
//     before the rmdir;
//   - a live holder touches the directory's mtime every max(stale/4, 1 s);
//   - a waiter takes a lock over (under the <lock>.steal gate) at once when its owner is on this host
//     and has exited (ESRCH); never while that owner lives (LOCK_TIMEOUT after the bounded wait,
//     naming the pid); by the mtime (stale) only without a readable owner file or with an owner on
//     another host.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/procid"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// ownerFile is the owner file inside a lock directory (the TypeScript kit's OWNER_FILE).
const ownerFile = "owner"

type lockOwner struct {
	Pid   int    `json:"pid"`
	Host  string `json:"host"`
	ID    string `json:"id"`
	Since int64  `json:"since"`
}

// cannotCreate: errors of mkdir that mean "no lock can be made here", not "someone holds it".
func cannotCreate(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EROFS, syscall.EACCES, syscall.EPERM, syscall.ENOSPC, syscall.EDQUOT} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

func readOwner(lockPath string) *lockOwner {
	raw, err := os.ReadFile(filepath.Join(lockPath, ownerFile))
	if err != nil {
		return nil
	}
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	pid, ok1 := fields["pid"].(float64)
	host, ok2 := fields["host"].(string)
	id, ok3 := fields["id"].(string)
	since, ok4 := fields["since"].(float64)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil
	}
	return &lockOwner{Pid: int(pid), Host: host, ID: id, Since: int64(since)}
}

func removeLock(lockPath string) {
	_ = os.Remove(filepath.Join(lockPath, ownerFile))
	_ = os.Remove(lockPath)
}

// ownerIDNow is the owner id in lockPath's owner file as it is: "" when the file is absent or no
// record. Its error is that of a disk that does not answer (anything but "no such file").
func ownerIDNow(lockPath string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(lockPath, ownerFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil {
		return "", nil
	}
	id, _ := fields["id"].(string)
	return id, nil
}

// removeOwnLock removes lockPath when its owner file still names id; its error is that of a disk that
// does not answer.
func removeOwnLock(lockPath, id string) error {
	owner, err := ownerIDNow(lockPath)
	if err != nil || owner != id {
		return err
	}
	if err := os.Remove(filepath.Join(lockPath, ownerFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(lockPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Lock directories this process held and could not remove when it let them go (the disk did not
// answer: a network disk, an unplugged drive), by path: the owner id it wrote. A live owner is never
// taken over, so nobody else may remove them: this process does, as soon as the disk answers again (a
// try each second, and at once before it takes the same lock again). As dir-lock.ts's leftBehind and
// _dir_lock.py's _left_behind.
var (
	leftBehindMu       sync.Mutex
	leftBehind         = map[string]string{}
	leftBehindRetrying bool
)

// leftBehindRetry is how often a lock directory left behind is tried again.
const leftBehindRetry = time.Second

// leaveBehind remembers a lock directory this process could not remove, to remove it once the disk
// answers.
func leaveBehind(lockPath, id string) {
	leftBehindMu.Lock()
	leftBehind[lockPath] = id
	leftBehindMu.Unlock()
	retryLeftBehind()
}

// removeLeftBehind removes the lock directory this process left behind at lockPath when it still
// names this process's owner id, and forgets it once it is gone or another's. A disk that still does
// not answer leaves it for the next try.
func removeLeftBehind(lockPath string) {
	leftBehindMu.Lock()
	id, ok := leftBehind[lockPath]
	leftBehindMu.Unlock()
	if !ok || removeOwnLock(lockPath, id) != nil {
		return
	}
	leftBehindMu.Lock()
	if leftBehind[lockPath] == id {
		delete(leftBehind, lockPath)
	}
	leftBehindMu.Unlock()
}

// retryLeftBehind tries every lock directory left behind again in a second, until each is settled:
// one timer for the process at a time.
func retryLeftBehind() {
	leftBehindMu.Lock()
	defer leftBehindMu.Unlock()
	if leftBehindRetrying || len(leftBehind) == 0 {
		return
	}
	leftBehindRetrying = true
	time.AfterFunc(leftBehindRetry, func() {
		leftBehindMu.Lock()
		leftBehindRetrying = false
		paths := make([]string, 0, len(leftBehind))
		for path := range leftBehind {
			paths = append(paths, path)
		}
		leftBehindMu.Unlock()
		for _, path := range paths {
			removeLeftBehind(path)
		}
		retryLeftBehind()
	})
}

// mayTakeOver: the owner decides first (gone: yes at once; alive on this host: never); without an
// owner, or with one on another host, the mtime decides.
func mayTakeOver(info os.FileInfo, owner *lockOwner, stale time.Duration) bool {
	if owner != nil && procid.IsGone(owner.Host, owner.Pid) {
		return true
	}
	if owner != nil && owner.Host == procid.Host() {
		return false
	}
	return info.ModTime().Before(time.Now().Add(-stale))
}

// removeStale removes the lock directory if it may still be taken over, holding the steal gate, so
// that two waiters that both saw it stale do not remove it one after the other.
func removeStale(lockPath string, stale time.Duration) bool {
	gate := lockPath + ".steal"
	if err := os.Mkdir(gate, 0o700); err != nil {
		// A stealer killed inside its gate would block every takeover: the gate is stale after stale too.
		if info, err := os.Stat(gate); err == nil && info.ModTime().Before(time.Now().Add(-stale)) {
			_ = os.Remove(gate)
		}
		return false
	}
	defer os.Remove(gate)
	info, err := os.Stat(lockPath)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil || !mayTakeOver(info, readOwner(lockPath), stale) {
		return false
	}
	removeLock(lockPath)
	return true
}

func describeHolder(lockPath string) string {
	owner := readOwner(lockPath)
	if owner == nil {
		return "another process"
	}
	if owner.Host != procid.Host() {
		return fmt.Sprintf("process %d on host %s", owner.Pid, owner.Host)
	}
	quiet := int64(0)
	if info, err := os.Stat(lockPath); err == nil {
		quiet = max(0, time.Since(info.ModTime()).Milliseconds())
	}
	return fmt.Sprintf("process %d on this host, which is alive but has not updated the lock for %d ms (stopped or paused? it is not taken over while it lives)", owner.Pid, quiet)
}

// process-wide: one holder per lock directory in this process at a time.
// The in-process gate of each lock directory, so that the goroutines of one process queue here
// rather than poll the directory; an entry lives while some goroutine uses it, so that a token file
// of many sessions keeps none for the sessions that are not refreshing.
var (
	localMu    sync.Mutex
	localLocks = map[string]*localSlot{}
)

type localSlot struct {
	gate  chan struct{}
	users int
}

// local is the gate of lockPath, counted as used until unlocal.
func local(lockPath string) *localSlot {
	localMu.Lock()
	defer localMu.Unlock()
	slot, ok := localLocks[lockPath]
	if !ok {
		slot = &localSlot{gate: make(chan struct{}, 1)}
		localLocks[lockPath] = slot
	}
	slot.users++
	return slot
}

func unlocal(lockPath string, slot *localSlot) {
	localMu.Lock()
	defer localMu.Unlock()
	if slot.users--; slot.users == 0 {
		delete(localLocks, lockPath)
	}
}

// holder is a held lock directory.
type holder struct {
	lockPath    string
	me          *lockOwner // nil when no owner file could be written (the mtime decides then)
	mu          sync.Mutex
	mtime       time.Time
	compromised bool
	stop        chan struct{}
	stopped     chan struct{}
}

// IsHeld is a fresh check that the directory is still this holder's.
func (h *holder) IsHeld(context.Context) bool {
	h.mu.Lock()
	compromised, mtime := h.compromised, h.mtime
	h.mu.Unlock()
	if compromised {
		return false
	}
	if h.me != nil {
		owner := readOwner(h.lockPath)
		return owner != nil && owner.ID == h.me.ID
	}
	info, err := os.Stat(h.lockPath)
	return err == nil && info.ModTime().Equal(mtime)
}

// touch keeps the directory fresh, as proper-lockfile's update timer: stat, check the mtime is still
// ours, set it to now. A changed or missing directory means it was taken over: touching stops.
func (h *holder) touch(stale time.Duration) {
	defer close(h.stopped)
	every := max(stale/4, time.Second)
	for {
		select {
		case <-h.stop:
			return
		case <-time.After(every):
		}
		info, err := os.Stat(h.lockPath)
		h.mu.Lock()
		if err != nil || !info.ModTime().Equal(h.mtime) {
			if err == nil || errors.Is(err, os.ErrNotExist) {
				h.compromised = true
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
			continue
		}
		now := time.Now()
		if os.Chtimes(h.lockPath, now, now) == nil {
			if info, err := os.Stat(h.lockPath); err == nil {
				h.mtime = info.ModTime()
			}
		}
		h.mu.Unlock()
	}
}

func (h *holder) release() {
	close(h.stop)
	<-h.stopped
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.me != nil {
		// A disk that does not answer: the directory, naming this live process, would outlive the
		// lock; it is removed once the disk answers.
		if err := removeOwnLock(h.lockPath, h.me.ID); err != nil {
			leaveBehind(h.lockPath, h.me.ID)
		}
		return
	}
	if info, err := os.Stat(h.lockPath); err == nil && !h.compromised && info.ModTime().Equal(h.mtime) {
		removeLock(h.lockPath)
	}
}

func take(lockPath string) (*holder, error) {
	if err := os.Mkdir(lockPath, 0o700); err != nil {
		return nil, err
	}
	h := &holder{lockPath: lockPath, stop: make(chan struct{}), stopped: make(chan struct{})}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	me := &lockOwner{Pid: procid.Pid(), Host: procid.Host(), ID: hex.EncodeToString(id), Since: time.Now().UnixMilli()}
	text, _ := json.Marshal(me)
	path := filepath.Join(lockPath, ownerFile)
	if file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_, werr := file.Write(text)
		cerr := file.Close()
		if werr == nil && cerr == nil {
			h.me = me
		} else {
			// A full disk makes the file but not its content: removed, so the lock is plainly owner-less.
			_ = os.Remove(path)
		}
	}
	// Taken after the owner file is written: a file made in the directory changes its mtime.
	if info, err := os.Stat(lockPath); err == nil {
		h.mtime = info.ModTime()
	}
	return h, nil
}

// hold runs task holding the lock directory lockPath beside the token file file (their directory
// must exist), waiting at most timeout for a live holder of another process; until (nil: none) may
// end the wait after each poll, or after a change the wait was woken by (lockwatch.go, when watched).
func hold(ctx context.Context, lockPath, file string, stale, timeout time.Duration, until func(context.Context) bool, watched bool, task func(context.Context, tokenmanager.Held) error) error {
	deadline := time.Now().Add(timeout)
	timedOut := func() error {
		return tokenmanager.NewStorageError(tokenmanager.CodeLockTimeout, lockPath,
			fmt.Sprintf("the lock %s stayed held for %s by %s", lockPath, timeout, describeHolder(lockPath)), nil, "", false)
	}
	slot := local(lockPath)
	defer unlocal(lockPath, slot)
	timer := time.NewTimer(timeout)
	select {
	case slot.gate <- struct{}{}:
		timer.Stop()
	case <-timer.C:
		return timedOut()
	case <-ctx.Done():
		timer.Stop()
		return ctx.Err()
	}
	defer func() { <-slot.gate }()
	// A directory this process left behind here is removed first (it would wait for itself).
	removeLeftBehind(lockPath)
	var watch *lockWatch
	watching := false
	defer func() { watch.close() }()
	for {
		h, err := take(lockPath)
		if err == nil {
			go h.touch(stale)
			defer h.release()
			return task(ctx, h)
		}
		if cannotCreate(err) {
			return task(ctx, alwaysHeld{})
		}
		if !errors.Is(err, os.ErrExist) {
			return tokenmanager.NewStorageError(tokenmanager.CodeIOFailed, lockPath, fmt.Sprintf("cannot take the lock %s (%s)", lockPath, errnoName(err)), err, "", false)
		}
		info, err := os.Stat(lockPath)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil && mayTakeOver(info, readOwner(lockPath), stale) && removeStale(lockPath, stale) {
			continue
		}
		if time.Now().After(deadline) {
			return timedOut()
		}
		if !watching && watched {
			// Watched from the first wait on; the lock is tried once more, as it may have been
			// released before the watch began.
			watch, watching = watchLock(lockPath, file), true
			continue
		}
		jitter, _ := rand.Int(rand.Reader, big.NewInt(40))
		if err := watch.pause(ctx, time.Duration(10+jitter.Int64())*time.Millisecond); err != nil {
			return err
		}
		if until != nil && until(ctx) {
			return tokenmanager.ErrLockWaitEnded
		}
	}
}

type alwaysHeld struct{}

func (alwaysHeld) IsHeld(context.Context) bool { return true }

func errnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := errnoNames[errno]; name != "" {
			return name
		}
		return errno.Error()
	}
	return "error"
}

var errnoNames = map[syscall.Errno]string{
	syscall.EROFS: "EROFS", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM", syscall.ENOSPC: "ENOSPC",
	syscall.EDQUOT: "EDQUOT", syscall.ENOENT: "ENOENT", syscall.EEXIST: "EEXIST", syscall.EISDIR: "EISDIR",
	syscall.ENOTDIR: "ENOTDIR", syscall.EIO: "EIO", syscall.ELOOP: "ELOOP",
}
