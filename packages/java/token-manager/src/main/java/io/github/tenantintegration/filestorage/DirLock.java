package io.github.tenantintegration.filestorage;

import io.github.tenantintegration.internal.Json;
import io.github.tenantintegration.internal.ProcessIdentity;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.Held;
import io.github.tenantintegration.tokenmanager.Lock;
import io.github.tenantintegration.tokenmanager.LockWaitEndedException;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The lock directory protocol shared with the TypeScript kit (proper-lockfile plus an owner file),
 * the Python kit ({@code storage/_dir_lock.py}) and the Go kit ({@code filestorage/dirlock.go}):
 *
 * <ul>
 *   <li>the lock is the directory {@code <file>.refresh.lock} (or {@code .write.lock}), taken by an
 *       atomic {@code mkdir} (never {@code FileChannel.lock}, which the other kits cannot see and which
 *       throws on a second lock in one JVM);
 *   <li>its holder writes the owner file right after the {@code mkdir}: {@code
 *       {"pid":<int>,"host":"<host name>","id":"<32 lowercase hex>","since":<ms>}}, and removes it right
 *       before the {@code rmdir};
 *   <li>a live holder touches the directory's mtime every {@code max(stale/4, 1 s)};
 *   <li>a waiter takes a lock over (under the {@code <lock>.steal} gate) at once when its owner is on
 *       this host and has exited; never while that owner lives ({@code LOCK_TIMEOUT} after the bounded
 *       wait, naming the pid); by the mtime ({@code stale}) only without a readable owner file or with
 *       an owner on another host.
 * </ul>
 */
final class DirLock {
    static final String OWNER_FILE = "owner";

    private static final SecureRandom RANDOM = new SecureRandom();

    /** One holder per lock directory in this process at a time. */
    private static final ConcurrentMap<Path, ReentrantLock> LOCAL = new ConcurrentHashMap<>();

    private static final ScheduledExecutorService TOUCHER = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "tenant-integration-lock-toucher");
        thread.setDaemon(true);
        return thread;
    });

    private DirLock() {}

    /** An owner file's content. */
    record Owner(long pid, String host, String id, long since) {
        String json() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("pid", pid);
            out.put("host", host);
            out.put("id", id);
            out.put("since", since);
            return Json.write(out);
        }
    }

    static Optional<Owner> readOwner(Path lock) {
        String text;
        try {
            text = Files.readString(lock.resolve(OWNER_FILE), StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return Json.parseObject(text).flatMap(m -> {
            if (m.get("pid") instanceof Number pid
                    && m.get("host") instanceof String host
                    && m.get("id") instanceof String id
                    && m.get("since") instanceof Number since) {
                return Optional.of(new Owner(pid.longValue(), host, id, since.longValue()));
            }
            return Optional.empty();
        });
    }

    private static void removeLock(Path lock) {
        try {
            Files.deleteIfExists(lock.resolve(OWNER_FILE));
            Files.deleteIfExists(lock);
        } catch (IOException e) {
            // Left behind: a waiter takes it over by its owner or its mtime.
        }
    }

    /**
     * The owner id in {@code lock}'s owner file as it is: null when the file is absent or no record.
     *
     * @throws IOException when the disk does not answer (anything but "no such file")
     */
    static String ownerIdNow(Path lock) throws IOException {
        String text;
        try {
            text = Files.readString(lock.resolve(OWNER_FILE), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        }
        return Json.parseObject(text)
                .map(m -> m.get("id") instanceof String id ? id : null)
                .orElse(null);
    }

    /**
     * Removes {@code lock} when its owner file still names {@code id}.
     *
     * @throws IOException when the disk does not answer
     */
    static void removeOwnLock(Path lock, String id) throws IOException {
        if (!id.equals(ownerIdNow(lock))) return;
        Files.deleteIfExists(lock.resolve(OWNER_FILE));
        Files.deleteIfExists(lock);
    }

    /**
     * Lock directories this process held and could not remove when it let them go (the disk did not
     * answer: a network disk, an unplugged drive), by path: the owner id it wrote. A live owner is never
     * taken over, so nobody else may remove them: this process does, as soon as the disk answers again
     * (a try each second, and at once before it takes the same lock again). As the Go kit's
     * {@code leftBehind}, dir-lock.ts's and _dir_lock.py's.
     */
    private static final ConcurrentMap<Path, String> LEFT_BEHIND = new ConcurrentHashMap<>();

    /** Whether a retry of the directories left behind is scheduled (one at a time for the process). */
    private static final AtomicBoolean LEFT_BEHIND_RETRYING = new AtomicBoolean();

    /** How often a lock directory left behind is tried again. */
    static final long LEFT_BEHIND_RETRY_MS = 1000;

    /** Remembers a lock directory this process could not remove, to remove it once the disk answers. */
    static void leaveBehind(Path lock, String id) {
        LEFT_BEHIND.put(lock, id);
        retryLeftBehind();
    }

    /**
     * Removes the lock directory this process left behind at {@code lock} when it still names this
     * process's owner id, and forgets it once it is gone or another's. A disk that still does not answer
     * leaves it for the next try.
     */
    static void removeLeftBehind(Path lock) {
        String id = LEFT_BEHIND.get(lock);
        if (id == null) return;
        try {
            removeOwnLock(lock, id);
        } catch (IOException e) {
            return;
        }
        LEFT_BEHIND.remove(lock, id);
    }

    /** Tries every lock directory left behind again in a second, until each is settled: one timer at a time. */
    private static void retryLeftBehind() {
        if (LEFT_BEHIND.isEmpty() || !LEFT_BEHIND_RETRYING.compareAndSet(false, true)) return;
        TOUCHER.schedule(
                () -> {
                    LEFT_BEHIND_RETRYING.set(false);
                    for (Path lock : LEFT_BEHIND.keySet()) removeLeftBehind(lock);
                    retryLeftBehind();
                },
                LEFT_BEHIND_RETRY_MS,
                TimeUnit.MILLISECONDS);
    }

    /** The owner decides first (gone: yes at once; alive on this host: never); without one, the mtime. */
    static boolean mayTakeOver(FileTime mtime, Optional<Owner> owner, Duration stale) {
        if (owner.isPresent()
                && ProcessIdentity.isGone(owner.get().host(), owner.get().pid())) return true;
        if (owner.isPresent() && owner.get().host().equals(ProcessIdentity.host())) return false;
        return mtime.toInstant().isBefore(Instant.now().minus(stale));
    }

    /**
     * Removes the lock directory if it may still be taken over, holding the steal gate, so that two
     * waiters that both saw it stale do not remove it one after the other.
     */
    static boolean removeStale(Path lock, Duration stale) {
        Path gate = lock.resolveSibling(lock.getFileName() + ".steal");
        try {
            Files.createDirectory(gate);
        } catch (IOException e) {
            // A stealer killed inside its gate would block every takeover: the gate is stale after stale too.
            try {
                if (Files.getLastModifiedTime(gate)
                        .toInstant()
                        .isBefore(Instant.now().minus(stale))) Files.deleteIfExists(gate);
            } catch (IOException ignored) {
                // Gone meanwhile.
            }
            return false;
        }
        try {
            FileTime mtime;
            try {
                mtime = Files.getLastModifiedTime(lock);
            } catch (NoSuchFileException e) {
                return true;
            } catch (IOException e) {
                return false;
            }
            if (!mayTakeOver(mtime, readOwner(lock), stale)) return false;
            removeLock(lock);
            return true;
        } finally {
            try {
                Files.deleteIfExists(gate);
            } catch (IOException ignored) {
                // Left: stale after stale.
            }
        }
    }

    static String describeHolder(Path lock) {
        Optional<Owner> owner = readOwner(lock);
        if (owner.isEmpty()) return "another process";
        if (!owner.get().host().equals(ProcessIdentity.host())) {
            return "process " + owner.get().pid() + " on host " + owner.get().host();
        }
        long quiet = 0;
        try {
            quiet = Math.max(
                    0,
                    Duration.between(Files.getLastModifiedTime(lock).toInstant(), Instant.now())
                            .toMillis());
        } catch (IOException ignored) {
            // Gone meanwhile.
        }
        return "process " + owner.get().pid() + " on this host, which is alive but has not updated the lock for "
                + quiet + " ms (stopped or paused? it is not taken over while it lives)";
    }

    /** A held lock directory: its owner (null when no owner file could be written), its mtime, its toucher. */
    static final class Holder implements Held {
        final Path lock;
        final Owner me;
        private final ReentrantLock mu = new ReentrantLock();
        private FileTime mtime;
        private boolean compromised;
        private ScheduledFuture<?> touching;

        Holder(Path lock, Owner me, FileTime mtime) {
            this.lock = lock;
            this.me = me;
            this.mtime = mtime;
        }

        /** A fresh check that the directory is still this holder's. */
        @Override
        public boolean isHeld() {
            FileTime seen;
            mu.lock();
            try {
                if (compromised) return false;
                seen = mtime;
            } finally {
                mu.unlock();
            }
            if (me != null)
                return readOwner(lock).map(owner -> owner.id().equals(me.id())).orElse(false);
            try {
                return Files.getLastModifiedTime(lock).equals(seen);
            } catch (IOException e) {
                return false;
            }
        }

        /** Keeps the directory fresh, as proper-lockfile's update timer: its mtime still ours, set to now. */
        void touch() {
            mu.lock();
            try {
                if (compromised) return;
                FileTime now;
                try {
                    now = Files.getLastModifiedTime(lock);
                } catch (NoSuchFileException e) {
                    compromised = true;
                    touching.cancel(false);
                    return;
                } catch (IOException e) {
                    return;
                }
                if (!now.equals(mtime)) {
                    compromised = true;
                    touching.cancel(false);
                    return;
                }
                try {
                    Files.setLastModifiedTime(lock, FileTime.from(Instant.now()));
                    mtime = Files.getLastModifiedTime(lock);
                } catch (IOException e) {
                    // The next touch tries again.
                }
            } finally {
                mu.unlock();
            }
        }

        void start(Duration stale) {
            long every = Math.max(stale.toMillis() / 4, 1000);
            mu.lock();
            try {
                touching = TOUCHER.scheduleWithFixedDelay(this::touch, every, every, TimeUnit.MILLISECONDS);
            } finally {
                mu.unlock();
            }
        }

        void release() {
            mu.lock();
            try {
                if (touching != null) touching.cancel(false);
                if (me != null) {
                    try {
                        removeOwnLock(lock, me.id());
                    } catch (IOException e) {
                        // A disk that does not answer: the directory, naming this live process, would
                        // outlive the lock; it is removed once the disk answers.
                        leaveBehind(lock, me.id());
                    }
                    return;
                }
                try {
                    if (!compromised && Files.getLastModifiedTime(lock).equals(mtime)) removeLock(lock);
                } catch (IOException ignored) {
                    // Gone already.
                }
            } finally {
                mu.unlock();
            }
        }
    }

    /** Takes the lock directory: mkdir, then the owner file. */
    static Holder take(Path lock) throws IOException {
        Files.createDirectory(lock, Modes.DIRECTORY);
        byte[] id = new byte[16];
        RANDOM.nextBytes(id);
        Owner me = new Owner(
                ProcessIdentity.pid(),
                ProcessIdentity.host(),
                HexFormat.of().formatHex(id),
                System.currentTimeMillis());
        Path ownerFile = lock.resolve(OWNER_FILE);
        Owner written = null;
        try {
            Files.writeString(
                    ownerFile,
                    me.json(),
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
            written = me;
        } catch (IOException e) {
            // A full disk makes the file but not its content: removed, so the lock is plainly owner-less.
            try {
                Files.deleteIfExists(ownerFile);
            } catch (IOException ignored) {
                // Nothing more to do.
            }
        }
        // Read after the owner file is written: a file made in the directory changes its mtime.
        FileTime mtime = Files.getLastModifiedTime(lock);
        return new Holder(lock, written, mtime);
    }

    /**
     * Runs {@code task} holding the lock directory {@code lock} beside the token file {@code file}
     * (their directory must exist), waiting at most {@code timeout} for a live holder of another
     * process; {@code until} (null: none) may end the wait after each poll or wake-up.
     */
    static <T> T hold(
            Path lock, Path file, Duration stale, Duration timeout, BooleanSupplier until, Lock.Task<T> task) {
        return hold(lock, file, stale, timeout, until, true, task);
    }

    /**
     * {@link #hold} that, with {@code watched} false, polls the lock alone (10–50 ms, with jitter)
     * without a file system watch: a session's refresh lock, whose waiters are at most the processes
     * (a watch per waiter of every session would use up the system's inotify instances).
     */
    static <T> T hold(
            Path lock,
            Path file,
            Duration stale,
            Duration timeout,
            BooleanSupplier until,
            boolean watched,
            Lock.Task<T> task) {
        long deadline = System.nanoTime() + timeout.toNanos();
        ReentrantLock local = LOCAL.computeIfAbsent(lock, path -> new ReentrantLock());
        try {
            if (!local.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) throw timedOut(lock, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the lock " + lock);
        }
        LockWatch watch = null;
        boolean watching = false;
        try {
            // A directory this process left behind here is removed first (it would wait for itself).
            removeLeftBehind(lock);
            while (true) {
                Holder holder;
                try {
                    holder = take(lock);
                } catch (FileAlreadyExistsException e) {
                    holder = null;
                } catch (IOException e) {
                    if (Errno.cannotCreate(e)) return task.run(Held.ALWAYS);
                    throw new StorageException(
                            ErrorCode.IO_FAILED,
                            lock.toString(),
                            "cannot take the lock " + lock + " (" + Errno.name(e) + ")",
                            e);
                }
                if (holder != null) {
                    holder.start(stale);
                    try {
                        return task.run(holder);
                    } finally {
                        holder.release();
                    }
                }
                FileTime mtime;
                try {
                    mtime = Files.getLastModifiedTime(lock);
                } catch (NoSuchFileException e) {
                    continue;
                } catch (IOException e) {
                    mtime = FileTime.from(Instant.now());
                }
                if (mayTakeOver(mtime, readOwner(lock), stale) && removeStale(lock, stale)) continue;
                if (System.nanoTime() - deadline > 0) throw timedOut(lock, timeout);
                if (!watching && watched) {
                    // Watched from the first wait on; the lock is tried once more, as it may have been
                    // released before the watch began.
                    watch = LockWatch.start(lock, file);
                    watching = true;
                    continue;
                }
                LockWatch.pause(watch, 10 + RANDOM.nextInt(40));
                if (until != null && until.getAsBoolean()) throw new LockWaitEndedException();
            }
        } finally {
            if (watch != null) watch.close();
            local.unlock();
        }
    }

    private static StorageException timedOut(Path lock, Duration timeout) {
        return new StorageException(
                ErrorCode.LOCK_TIMEOUT,
                lock.toString(),
                "the lock " + lock + " stayed held for " + timeout.toMillis() + " ms by " + describeHolder(lock),
                null);
    }
}
