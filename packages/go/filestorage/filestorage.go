// Package filestorage is a token storage in one JSON file, shared safely by the processes of one
// machine, Go, TypeScript and Python alike: the same file format
// (spec/token-store/token-file.schema.json) and the same lock directories as fileStorage of
// @tenant-integration/token-manager/node and FileStorage of the Python kit.
//
//   - One refresh among processes: Lock() is the cross-process refresh lock <file>.refresh.lock, and
//     SessionLock() one per session (<file>.<hash>.refresh.lock) for a file shared by the sessions
//     of a server acting for many users. A waiter polls it every 10–50 ms and wakes at once when it
//     is released or the file replaced (a file system watch where the system has one), so that
//     processes waiting for another's refresh use its tokens as soon as they are written.
//   - Pending sign-ins by state: Take reads and removes one under the write lock (single use across
//     processes); each write drops those whose expiry has passed.
//   - Writes that lose nothing: each Set and Delete reads, changes and writes the file under
//     <file>.write.lock; a write goes to <file>.<12 hex>.tmp, is fsynced, renamed over the file, and
//     the directory is fsynced. The changes a process makes while a rewrite runs are written
//     together by the next one (writes.go), each call returning once its change is durable.
//   - Modes: missing directories are made 0700, the file 0600; a file others may read is tightened
//     to 0600 with a warning (FILE_UNSAFE when it cannot be).
//   - Faults: an empty, corrupt or foreign file is moved aside to <file>.corrupt-<time>-<random> and
//     reported once as FILE_CORRUPT (the manager: NOT_SIGNED_IN); a read-only directory or a full
//     disk is IO_FAILED naming the file and the errno.
//
// See RFC 6749 §10.3, RFC 8252, RFC 9700 §4.14.2.
package filestorage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/pendingrecord"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// maxLinks: symlinks followed before giving up, as the kernel's own limit (ELOOP).
const maxLinks = 40

// leftover matches the temporary files of writers (<file>.<12 hex>.tmp).
var leftover = regexp.MustCompile(`^[0-9a-f]{12}\.tmp$`)

// Storage is the token file. Make it with New.
type Storage struct {
	path        string
	staleAfter  time.Duration
	lockTimeout time.Duration
	log         *slog.Logger
	writes      writes // the changes waiting for a rewrite (writes.go)
	last        atomic.Pointer[snapshot]
}

// Option sets an optional behaviour of New.
type Option func(*Storage)

// WithStaleAfter sets after how long a lock directory whose holder stopped touching it is taken
// over, when its owner cannot be checked (no owner file, or another host) (default 10 s, at least 2 s).
func WithStaleAfter(d time.Duration) Option { return func(s *Storage) { s.staleAfter = d } }

// WithLockTimeout sets how long to wait for a lock held by a live process (default 30 s), then LOCK_TIMEOUT.
func WithLockTimeout(d time.Duration) Option { return func(s *Storage) { s.lockTimeout = d } }

// WithLogger sets the slog logger of warnings (paths and modes only, never a value).
func WithLogger(l *slog.Logger) Option { return func(s *Storage) { s.log = l } }

// New makes the storage of the token file at path (made on the first write).
func New(path string, opts ...Option) (*Storage, error) {
	if path == "" {
		return nil, tokenmanager.NewError(tokenmanager.CodeInvalidOptions, "path: give the token file's path", nil)
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, tokenmanager.NewError(tokenmanager.CodeInvalidOptions, "path: "+err.Error(), nil)
	}
	s := &Storage{path: abs, staleAfter: 10 * time.Second, lockTimeout: 30 * time.Second}
	for i, opt := range opts {
		if opt == nil {
			return nil, tokenmanager.NewError(tokenmanager.CodeInvalidOptions, fmt.Sprintf("option %d is nil", i+1), nil)
		}
		opt(s)
	}
	if s.lockTimeout <= 0 || s.staleAfter <= 0 {
		return nil, tokenmanager.NewError(tokenmanager.CodeInvalidOptions, "durations must be > 0", nil)
	}
	// proper-lockfile's floor, so that a live holder's touches always beat the stale time.
	s.staleAfter = max(s.staleAfter, 2*time.Second)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Path is the token file's absolute path.
func (s *Storage) Path() string { return s.path }

// Lock is the cross-process refresh lock <file>.refresh.lock: whatever name is passed, the one lock
// of this file, as in the other kits: the lock of a manager without a session id.
// Errors: LOCK_TIMEOUT (naming the holder), IO_FAILED.
func (s *Storage) Lock() tokenmanager.Lock { return refreshLock{s: s} }

// SessionLock is the refresh lock of each session of a token file shared by many sessions
// (tokenmanager.Sessions, WithSessionID): the lock directory <file>.<h>.refresh.lock, <h> the first
// 16 lowercase hex digits of SHA-256 of the session's lock name, as in the other kits
// (spec/token-store/README.md, "Locks"), so that one session's refresh never waits for another's.
// Writes of the file still share <file>.write.lock, held only to read, change and write the file.
func (s *Storage) SessionLock() tokenmanager.Lock { return refreshLock{s: s, perName: true} }

type refreshLock struct {
	s       *Storage
	perName bool
}

func (l refreshLock) Do(ctx context.Context, name string, task func(context.Context, tokenmanager.Held) error) error {
	return l.DoUntil(ctx, name, nil, task)
}

// DoUntil is Do whose wait ends (tokenmanager.ErrLockWaitEnded) once until says so; until is called
// after each poll of a lock another process holds (tokenmanager.WaitingLock).
func (l refreshLock) DoUntil(ctx context.Context, name string, until func(context.Context) bool, task func(context.Context, tokenmanager.Held) error) error {
	run := func(ctx context.Context, held tokenmanager.Held, _ string) error { return task(ctx, held) }
	if l.perName {
		// A session's waiters are at most the processes, each taking the lock in turn and reading the
		// tokens under it: no until (each would read the whole file, shared by every session, at
		// every wake of every waiter) and no watch (a file system watch per waiter of every session
		// would use up the system's watches); they poll the lock directory alone.
		return l.s.lockedUntil(ctx, sessionLockHash(name)+".refresh", nil, false, run)
	}
	return l.s.lockedUntil(ctx, "refresh", until, true, run)
}

// sessionLockHash is <h> of a session's lock directory: the first 16 lowercase hex digits of
// SHA-256 of its lock name (UTF-8).
func sessionLockHash(lockName string) string {
	sum := sha256.Sum256([]byte(lockName))
	return hex.EncodeToString(sum[:8])
}

func ioFailed(path, what string, err error) error {
	return tokenmanager.NewStorageError(tokenmanager.CodeIOFailed, path, fmt.Sprintf("%s %s (%s)", what, path, errnoName(err)), err, "", false)
}

// target follows the path through symlinks to the file they name, which need not exist yet.
func (s *Storage) target() (string, error) {
	current := s.path
	for range maxLinks {
		info, err := os.Lstat(current)
		if errors.Is(err, fs.ErrNotExist) {
			return current, nil
		}
		if err != nil {
			return "", ioFailed(current, "cannot read the token file", err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			if !info.Mode().IsRegular() {
				return "", tokenmanager.NewStorageError(tokenmanager.CodeFileUnsafe, current, "the token file "+current+" is not a regular file", nil, "", false)
			}
			return current, nil
		}
		link, err := os.Readlink(current)
		if err != nil {
			return "", ioFailed(current, "cannot read the token file", err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(current), link)
		}
		current = filepath.Clean(link)
	}
	return "", tokenmanager.NewStorageError(tokenmanager.CodeFileUnsafe, s.path, "the token file "+s.path+" is a loop of symlinks", nil, "", false)
}

// makeDirectories creates dir and its missing parents, each 0700.
func makeDirectories(dir string) error {
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := makeDirectories(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// locked runs task(file) holding <file>.<kind>.lock beside the resolved file.
func (s *Storage) locked(ctx context.Context, kind string, task func(context.Context, tokenmanager.Held, string) error) error {
	return s.lockedUntil(ctx, kind, nil, true, task)
}

// lockedUntil runs task(file) holding <file>.<kind>.lock; until (nil: none) may end the wait;
// watched says whether the wait also wakes on a file system watch of the lock and the file.
func (s *Storage) lockedUntil(ctx context.Context, kind string, until func(context.Context) bool, watched bool, task func(context.Context, tokenmanager.Held, string) error) error {
	file, err := s.target()
	if err != nil {
		return err
	}
	if err := makeDirectories(filepath.Dir(file)); err != nil {
		return ioFailed(file, "cannot create the directory of the token file", err)
	}
	return hold(ctx, file+"."+kind+".lock", file, s.staleAfter, s.lockTimeout, until, watched, func(ctx context.Context, held tokenmanager.Held) error {
		return task(ctx, held, file)
	})
}

// readText is the file's text (tightening a loose mode first); ok is false when there is none.
func (s *Storage) readText(file string) (string, bool, error) {
	info, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, ioFailed(file, "cannot read the token file", err)
	}
	if mode := info.Mode().Perm(); mode&0o077 != 0 {
		if err := os.Chmod(file, 0o600); err != nil {
			return "", false, tokenmanager.NewStorageError(tokenmanager.CodeFileUnsafe, file,
				fmt.Sprintf("the token file %s may be read by others (mode %04o) and cannot be tightened to 0600", file, mode), err, "", false)
		}
		s.log.Warn(fmt.Sprintf("the token file %s was readable by others (mode %04o); tightened to 0600. The tokens in it may have been read: sign out and sign in again to replace them", file, mode))
	}
	raw, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, ioFailed(file, "cannot read the token file", err)
	}
	return string(raw), true, nil
}

// problem says what is wrong with the text of a token file, "" when it is a JSON object of strings.
// The parser's message quotes the text, which may hold tokens: only what is wrong is said.
func problem(text string) string {
	if strings.TrimSpace(text) == "" {
		return "empty"
	}
	var data any
	if json.Unmarshal([]byte(text), &data) != nil {
		return "not valid JSON"
	}
	object, ok := data.(map[string]any)
	if !ok {
		return "not a JSON object"
	}
	for _, value := range object {
		if _, ok := value.(string); !ok {
			return "not a JSON object of strings"
		}
	}
	return ""
}

func decode(text string) map[string]string {
	data := map[string]string{}
	_ = json.Unmarshal([]byte(text), &data)
	return data
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// setAside moves an unreadable file aside (it may hold the only copy of a refresh token).
func (s *Storage) setAside(file, what string) error {
	stamp := strings.NewReplacer(":", "-", ".", "-").Replace(time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	movedTo := fmt.Sprintf("%s.corrupt-%s-%s", file, stamp, randomHex(3))
	if err := os.Rename(file, movedTo); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioFailed(file, "cannot move the corrupt token file aside", err)
	}
	return tokenmanager.NewStorageError(tokenmanager.CodeFileCorrupt, file,
		fmt.Sprintf("the token file %s was %s; moved aside to %s: sign in again", file, what, movedTo), nil, movedTo, true)
}

// encode is the file's bytes: compact JSON without HTML escaping, as JSON.stringify writes it.
func encode(data map[string]string) []byte {
	var b strings.Builder
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(data)
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// writeDurably writes data: temporary file, fsync, rename, fsync of the directory.
func writeDurably(file string, data map[string]string) error {
	temp := fmt.Sprintf("%s.%s.tmp", file, randomHex(6))
	handle, err := os.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return ioFailed(file, "cannot write the token file", err)
	}
	fail := func(err error) error {
		_ = handle.Close()
		_ = os.Remove(temp)
		return ioFailed(file, "cannot write the token file", err)
	}
	if err := handle.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := handle.Write(encode(data)); err != nil {
		return fail(err)
	}
	if err := handle.Sync(); err != nil {
		return fail(err)
	}
	if err := handle.Close(); err != nil {
		_ = os.Remove(temp)
		return ioFailed(file, "cannot write the token file", err)
	}
	if err := os.Rename(temp, file); err != nil {
		_ = os.Remove(temp)
		return ioFailed(file, "cannot write the token file", err)
	}
	dir, err := os.Open(filepath.Dir(file))
	if err == nil {
		err = dir.Sync()
		_ = dir.Close()
	}
	if err != nil {
		return ioFailed(file, "cannot make the write of the token file durable", err)
	}
	return nil
}

// removeLeftovers removes the temporary files of writers killed mid-write.
func removeLeftovers(file string) {
	dir, prefix := filepath.Dir(file), filepath.Base(file)+"."
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, entry := range entries {
		name := entry.Name()
		if strings.HasPrefix(name, prefix) && leftover.MatchString(name[len(prefix):]) {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}

func isCorrupt(err error) bool {
	return errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeFileCorrupt})
}

// Get returns the value of key; ok is false when absent (or when there is no file yet).
// Errors: FILE_CORRUPT (the file was moved aside), FILE_UNSAFE, IO_FAILED, LOCK_TIMEOUT.
func (s *Storage) Get(ctx context.Context, key string) (string, bool, error) {
	file, err := s.target()
	if err != nil {
		return "", false, err
	}
	text, ok, err := s.readText(file)
	if err != nil || !ok {
		return "", false, err
	}
	if data := s.read(text); data != nil {
		value, ok := data[key]
		return value, ok, nil
	}
	// Decide under the write lock, on a fresh read: another process may have replaced it meanwhile.
	var value string
	var found bool
	err = s.locked(ctx, "write", func(_ context.Context, _ tokenmanager.Held, file string) error {
		fresh, ok, err := s.readText(file)
		if err != nil || !ok {
			return err
		}
		if what := problem(fresh); what != "" {
			return s.setAside(file, what)
		}
		value, found = decode(fresh)[key]
		return nil
	})
	return value, found, err
}

// snapshot is a text of the file and its data, decoded once for every read of that same text: a file
// shared by many sessions is read far more often than it changes, and decoding it is most of a read.
type snapshot struct {
	text string
	data map[string]string // never changed once stored
}

// read is the data of a file whose text is text, nil when the text is no JSON object of strings. A
// text equal to the last one read (compared whole: never by its size or time) reuses its data.
func (s *Storage) read(text string) map[string]string {
	if last := s.last.Load(); last != nil && last.text == text {
		return last.data
	}
	if problem(text) != "" {
		return nil
	}
	data := decode(text)
	s.last.Store(&snapshot{text: text, data: data})
	return data
}

// Set stores value under key, keeping every other key; durable when it returns.
func (s *Storage) Set(ctx context.Context, key, value string) error {
	return s.update(ctx, func(data map[string]string) bool {
		data[key] = value
		return true
	})
}

// SetExpiring stores value under key, as Set (tokenmanager.ExpiringStorage): the file drops a pending
// sign-in (a key …:pending:<32 hex digits>) on a later write once its record's expiresAt has passed,
// or when it is no valid record, without a scan of anything but the file it rewrites anyway; lifetime
// itself is not kept.
func (s *Storage) SetExpiring(ctx context.Context, key, value string, _ time.Duration) error {
	return s.Set(ctx, key, value)
}

// Take returns the value of key and removes it, in one step under the write lock
// (tokenmanager.TakingStorage): of any number of processes taking one key, one gets it.
func (s *Storage) Take(ctx context.Context, key string) (string, bool, error) {
	var value string
	var found bool
	err := s.update(ctx, func(data map[string]string) bool {
		value, found = data[key]
		delete(data, key)
		return found
	})
	return value, found, err
}

// dropPending drops every pending sign-in whose record has expired by nowMs or does not validate
// (spec/token-store/README.md, "Pending sign-ins by state": on each write of the file).
func dropPending(data map[string]string, nowMs int64) {
	for key, value := range data {
		if pendingrecord.IsName(key) && pendingrecord.Expired(value, nowMs) {
			delete(data, key)
		}
	}
}

// Delete removes key; writes nothing when it is absent.
func (s *Storage) Delete(ctx context.Context, key string) error {
	return s.update(ctx, func(data map[string]string) bool {
		if _, ok := data[key]; !ok {
			return false
		}
		delete(data, key)
		return true
	})
}

// String names the file, never a value.
func (s *Storage) String() string { return "filestorage.Storage(" + s.path + ")" }
