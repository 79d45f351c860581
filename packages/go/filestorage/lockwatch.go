package filestorage

// How a waiter for a lock directory learns that it may go on. It polls (every 10–50 ms, with
// jitter), which alone finds a holder that died (no file system event tells of that) and works on
// any file system; and, where the directory can be watched (inotify, kqueue, ReadDirectoryChangesW
// through fsnotify), it also wakes as soon as the lock directory is removed or the token file is
// replaced (a writer's rename), as the TypeScript kit's waiters do with fs.watch. Without the watch,
// processes that wait for another's refresh find its tokens only at their next poll: 20 of them
// took on average most of the 50 ms bound to all hold a token. The lock directory protocol is the
// same either way: a watch only shortens a wait.

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// lockWatch watches the directory of a lock and of its token file for the two changes a waiter
// waits for. The nil *lockWatch (no watch could be made) waits for the poll alone.
type lockWatch struct {
	watcher *fsnotify.Watcher
	lock    string // the lock directory: its removal frees the lock
	file    string // the token file: a rename over it brings new tokens
}

// watchLock starts a watch of the directory holding lockPath and file (the same one); nil when the
// system gives none (no inotify instance left, say): the waiter then only polls.
func watchLock(lockPath, file string) *lockWatch {
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	if err := watcher.Add(filepath.Dir(lockPath)); err != nil {
		_ = watcher.Close()
		return nil
	}
	return &lockWatch{watcher: watcher, lock: lockPath, file: file}
}

// pause waits for delay, or less: until the lock directory is removed or the token file replaced.
// It returns ctx.Err() when ctx ends first.
func (w *lockWatch) pause(ctx context.Context, delay time.Duration) error {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.watcher.Events, w.watcher.Errors
	}
	for {
		select {
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case event, open := <-events:
			if !open {
				events = nil // closed: the poll goes on alone
				continue
			}
			if w.wakes(event) {
				w.drain()
				return nil
			}
		case _, open := <-errs:
			if !open {
				errs = nil
			}
			// An overflow or a read error loses events, not the poll: nothing to do.
		}
	}
}

// wakes: the event may let the waiter go on (the lock went away, or tokens were written).
func (w *lockWatch) wakes(event fsnotify.Event) bool {
	switch event.Name {
	case w.lock:
		return event.Has(fsnotify.Remove) || event.Has(fsnotify.Rename)
	case w.file:
		return event.Has(fsnotify.Create) || event.Has(fsnotify.Write)
	}
	return false
}

// drain drops the events already queued: one write makes several, and one look is enough.
func (w *lockWatch) drain() {
	for {
		select {
		case _, open := <-w.watcher.Events:
			if !open {
				return
			}
		default:
			return
		}
	}
}

// close ends the watch; nil-safe.
func (w *lockWatch) close() {
	if w != nil {
		_ = w.watcher.Close()
	}
}
