package io.github.tenantintegration.filestorage;

import io.github.tenantintegration.internal.Json;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.ExpiringStorage;
import io.github.tenantintegration.tokenmanager.Held;
import io.github.tenantintegration.tokenmanager.Lock;
import io.github.tenantintegration.tokenmanager.SessionLockingStorage;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TakingStorage;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.github.tenantintegration.tokenmanager.WaitingLock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A token storage in one JSON file, shared safely by the processes of one machine, Java, TypeScript,
 * Python and Go alike: the same file format ({@code spec/token-store/token-file.schema.json}) and the
 * same lock directories as the other kits' file storages.
 *
 * <ul>
 *   <li>One refresh among processes: {@link #lock()} is the cross-process refresh lock
 *       {@code <file>.refresh.lock}. A waiter polls it every 10–50 ms and wakes at once when it is
 *       released or the file replaced (a {@code WatchService} where the system has one), so that
 *       processes waiting for another's refresh use its tokens as soon as they are written.
 *   <li>Writes that lose nothing: each {@code set} and {@code delete} reads, changes and writes the
 *       file under {@code <file>.write.lock}; a write goes to {@code <file>.<12 hex>.tmp}, is forced to
 *       disk, renamed over the file, and the directory is forced. The changes other threads make
 *       while a rewrite runs are applied together by the next one ({@link Writes}), each call
 *       returning once its change is durable: a server's many sessions on one file do not queue
 *       behind each other's forced writes.
 *   <li>Modes: missing directories are made 0700, the file 0600; a file others may read is tightened
 *       to 0600 with a warning ({@code FILE_UNSAFE} when it cannot be).
 *   <li>Faults: an empty, corrupt or foreign file is moved aside to {@code
 *       <file>.corrupt-<time>-<random>} and reported once as {@code FILE_CORRUPT} (the manager: {@code
 *       NOT_SIGNED_IN}); a read-only directory or a full disk is {@code IO_FAILED} naming the file and
 *       the errno.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc8252">RFC 8252</a>, RFC 6749 §10.3, RFC 9700 §4.14.2
 */
public final class FileStorage implements SessionLockingStorage, ExpiringStorage, TakingStorage {
    private static final int MAX_LINKS = 40;
    private static final Pattern LEFTOVER = Pattern.compile("^[0-9a-f]{12}\\.tmp$");
    private static final Pattern PENDING_BY_STATE = Pattern.compile(":pending:[0-9a-f]{32}$");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path path;
    private final Duration staleAfter;
    private final Duration lockTimeout;
    private final System.Logger logger;
    private final Writes writes = new Writes(this::rewrite); // the changes waiting for a rewrite

    private FileStorage(Builder b) {
        String given = b.path.toString();
        Path expanded = given.startsWith("~/") ? Path.of(System.getProperty("user.home"), given.substring(2)) : b.path;
        this.path = expanded.toAbsolutePath().normalize();
        if (b.lockTimeout.isNegative()
                || b.lockTimeout.isZero()
                || b.staleAfter.isNegative()
                || b.staleAfter.isZero()) {
            throw new TokenManagerException(ErrorCode.INVALID_OPTIONS, "staleAfter and lockTimeout must be positive");
        }
        // proper-lockfile's floor, so that a live holder's touches always beat the stale time.
        this.staleAfter = b.staleAfter.compareTo(Duration.ofSeconds(2)) < 0 ? Duration.ofSeconds(2) : b.staleAfter;
        this.lockTimeout = b.lockTimeout;
        this.logger = b.logger != null ? b.logger : System.getLogger(FileStorage.class.getName());
    }

    /**
     * The storage of the token file at {@code path} (made on the first write), with the defaults: a
     * lock whose holder stopped touching it is taken over after 10 s when its owner cannot be checked,
     * and waits for a live holder last 30 s.
     */
    public static FileStorage of(Path path) {
        return builder(path).build();
    }

    /** A builder of the storage of the token file at {@code path} ({@code ~/} is the home directory). */
    public static Builder builder(Path path) {
        if (path == null || path.toString().isEmpty()) {
            throw new TokenManagerException(ErrorCode.INVALID_OPTIONS, "path: give the token file's path");
        }
        return new Builder(path);
    }

    /** The token file's absolute path. */
    public Path path() {
        return path;
    }

    /**
     * The cross-process refresh lock {@code <file>.refresh.lock}: whatever name is passed, the one lock
     * of this file, as in the other kits. Errors: {@code LOCK_TIMEOUT} (naming the holder), {@code
     * IO_FAILED}.
     */
    @Override
    public Lock lock() {
        return new RefreshLock();
    }

    /**
     * The refresh lock of each session of a token file shared by many sessions ({@link
     * io.github.tenantintegration.tokenmanager.Sessions}, a manager with a session id): the lock
     * directory {@code <file>.<h>.refresh.lock}, {@code <h>} the first 16 lowercase hex digits of the
     * SHA-256 of the session's lock name, as in the other kits ({@code spec/token-store/README.md},
     * "Locks"), so that one session's refresh never waits for another's. It is polled alone: no {@code
     * until} check (each would read the whole file, shared by every session) and no file system watch.
     */
    @Override
    public Lock sessionLock() {
        return new SessionLock();
    }

    /** {@code <h>} of a session's lock directory. */
    static String sessionLockHash(String lockName) {
        try {
            byte[] sum = MessageDigest.getInstance("SHA-256").digest(lockName.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sum, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is in every JDK", e);
        }
    }

    /** The refresh lock directory of the session whose lock is {@code lockName} (for tests and tools). */
    public Path sessionLockDirectory(String lockName) {
        Path file = target();
        return file.resolveSibling(file.getFileName() + "." + sessionLockHash(lockName) + ".refresh.lock");
    }

    private final class SessionLock implements Lock {
        @Override
        public <T> T withLock(String name, Task<T> task) {
            Path file = target();
            try {
                makeDirectories(file.getParent());
            } catch (IOException e) {
                throw ioFailed(file, "cannot create the directory of the token file", e);
            }
            Path lock = file.resolveSibling(file.getFileName() + "." + sessionLockHash(name) + ".refresh.lock");
            return DirLock.hold(lock, file, staleAfter, lockTimeout, null, false, task);
        }
    }

    private final class RefreshLock implements WaitingLock {
        @Override
        public <T> T withLock(String name, Task<T> task) {
            return locked("refresh", null, (held, file) -> task.run(held));
        }

        @Override
        public <T> T withLockUntil(String name, BooleanSupplier until, Task<T> task) {
            return locked("refresh", until, (held, file) -> task.run(held));
        }
    }

    @FunctionalInterface
    private interface FileTask<T> {
        T run(Held held, Path file);
    }

    private static StorageException ioFailed(Path file, String what, IOException e) {
        return new StorageException(
                ErrorCode.IO_FAILED, file.toString(), what + " " + file + " (" + Errno.name(e) + ")", e);
    }

    /** The file the path names, through symlinks; it need not exist yet. */
    private Path target() {
        Path current = path;
        for (int i = 0; i < MAX_LINKS; i++) {
            if (!Files.isSymbolicLink(current)) {
                if (Files.exists(current, LinkOption.NOFOLLOW_LINKS)
                        && !Files.isRegularFile(current, LinkOption.NOFOLLOW_LINKS)) {
                    throw new StorageException(
                            ErrorCode.FILE_UNSAFE,
                            current.toString(),
                            "the token file " + current + " is not a regular file",
                            null);
                }
                return current;
            }
            try {
                Path link = Files.readSymbolicLink(current);
                current = current.resolveSibling(link).normalize();
            } catch (IOException e) {
                throw ioFailed(current, "cannot read the token file", e);
            }
        }
        throw new StorageException(
                ErrorCode.FILE_UNSAFE, path.toString(), "the token file " + path + " is a loop of symlinks", null);
    }

    /** Creates {@code dir} and its missing parents, each 0700. */
    private static void makeDirectories(Path dir) throws IOException {
        if (Files.isDirectory(dir)) return;
        Path parent = dir.getParent();
        if (parent != null) makeDirectories(parent);
        try {
            Files.createDirectory(dir, Modes.DIRECTORY);
        } catch (FileAlreadyExistsException e) {
            // Made meanwhile.
        }
    }

    private <T> T locked(String kind, BooleanSupplier until, FileTask<T> task) {
        Path file = target();
        try {
            makeDirectories(file.getParent());
        } catch (IOException e) {
            throw ioFailed(file, "cannot create the directory of the token file", e);
        }
        Path lock = file.resolveSibling(file.getFileName() + "." + kind + ".lock");
        return DirLock.hold(lock, file, staleAfter, lockTimeout, until, held -> task.run(held, file));
    }

    /** The file's text (a loose mode tightened first); empty when there is no file. */
    private Optional<String> readText(Path file) {
        try {
            if (Modes.POSIX) {
                Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file);
                Set<PosixFilePermission> loose = EnumSet.noneOf(PosixFilePermission.class);
                loose.addAll(mode);
                loose.removeAll(Modes.OWNER_ONLY_DIRECTORY);
                if (!loose.isEmpty()) tighten(file, mode);
            }
            return Optional.of(Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (java.nio.charset.MalformedInputException e) {
            return Optional.of("\u0000"); // not UTF-8: not valid JSON either
        } catch (IOException e) {
            throw ioFailed(file, "cannot read the token file", e);
        }
    }

    private void tighten(Path file, Set<PosixFilePermission> mode) {
        try {
            Files.setPosixFilePermissions(file, Modes.OWNER_ONLY_FILE);
        } catch (IOException e) {
            throw new StorageException(
                    ErrorCode.FILE_UNSAFE,
                    file.toString(),
                    "the token file " + file + " may be read by others (mode " + Modes.octal(mode)
                            + ") and cannot be tightened to 0600",
                    e);
        }
        logger.log(
                System.Logger.Level.WARNING,
                "the token file " + file + " was readable by others (mode " + Modes.octal(mode)
                        + "); tightened to 0600. The tokens in it may have been read: sign out and sign in again to replace them");
    }

    /** What is wrong with the text of a token file, or null when it is a JSON object of strings. The text is never quoted. */
    static String problem(String text) {
        if (text.isBlank()) return "empty";
        Optional<Object> value = Json.parse(text);
        if (value.isEmpty()) return "not valid JSON";
        if (!(value.get() instanceof Map<?, ?> object)) return "not a JSON object";
        for (Object member : object.values()) if (!(member instanceof String)) return "not a JSON object of strings";
        return null;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> decode(String text) {
        return new LinkedHashMap<>((Map<String, String>) Json.parse(text).orElseThrow());
    }

    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        RANDOM.nextBytes(random);
        return HexFormat.of().formatHex(random);
    }

    /** Moves an unreadable file aside (it may hold the only copy of a refresh token), and says so. */
    private StorageException setAside(Path file, String what) {
        String stamp = Instant.now().toString().replace(":", "-").replace(".", "-");
        Path movedTo = file.resolveSibling(file.getFileName() + ".corrupt-" + stamp + "-" + randomHex(3));
        try {
            Files.move(file, movedTo);
        } catch (NoSuchFileException e) {
            // Gone meanwhile.
        } catch (IOException e) {
            return ioFailed(file, "cannot move the corrupt token file aside", e);
        }
        return new StorageException(
                ErrorCode.FILE_CORRUPT,
                file.toString(),
                "the token file " + file + " was " + what + "; moved aside to " + movedTo + ": sign in again",
                null,
                movedTo.toString(),
                true);
    }

    /** Writes {@code data}: a temporary file, forced, renamed over the file, the directory forced. */
    private static void writeDurably(Path file, Map<String, String> data) {
        Path temp = file.resolveSibling(file.getFileName() + "." + randomHex(6) + ".tmp");
        byte[] bytes = Json.write(data).getBytes(StandardCharsets.UTF_8);
        try {
            try (FileChannel channel = FileChannel.open(
                    temp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), Modes.FILE)) {
                if (Modes.POSIX) Files.setPosixFilePermissions(temp, Modes.OWNER_ONLY_FILE);
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) channel.write(buffer);
                channel.force(true);
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // A leftover is removed by the next write.
            }
            throw ioFailed(file, "cannot write the token file", e);
        }
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException e) {
            throw ioFailed(file, "cannot make the write of the token file durable", e);
        }
    }

    /** Removes the temporary files of writers killed mid-write. */
    private static void removeLeftovers(Path file) {
        String prefix = file.getFileName() + ".";
        try (Stream<Path> entries = Files.list(file.getParent())) {
            entries.filter(entry -> {
                        String name = entry.getFileName().toString();
                        return name.startsWith(prefix)
                                && LEFTOVER.matcher(name.substring(prefix.length()))
                                        .matches();
                    })
                    .forEach(entry -> {
                        try {
                            Files.deleteIfExists(entry);
                        } catch (IOException ignored) {
                            // The next write tries again.
                        }
                    });
        } catch (IOException | RuntimeException ignored) {
            // The next write tries again.
        }
    }

    /** Applies {@code change} and writes the file when it changed anything, batched with other threads' ({@link Writes}). */
    private void update(Predicate<Map<String, String>> change) {
        writes.update(change);
    }

    /** Applies a batch of changes under the write lock and writes the file once; then each is durable. */
    private void rewrite(List<Writes.Change> batch) {
        locked("write", null, (held, file) -> {
            Optional<String> text = readText(file);
            Map<String, String> data = new LinkedHashMap<>();
            if (text.isPresent()) {
                String what = problem(text.get());
                if (what == null) data = decode(text.get());
                else {
                    StorageException aside = setAside(file, what);
                    if (aside.code() != ErrorCode.FILE_CORRUPT) throw aside;
                }
            }
            boolean changed = false;
            for (Writes.Change change : batch) changed |= change.apply().test(data);
            boolean dropped = dropExpiredPending(data);
            if (changed || dropped) writeDurably(file, data);
            // After the write, not before: a refresh's write is the crash window, kept short.
            removeLeftovers(file);
            return null;
        });
        for (Writes.Change change : batch) change.done().complete(null);
    }

    /**
     * The value of {@code key}; empty when absent (or when there is no file yet).
     *
     * @throws StorageException {@code FILE_CORRUPT} (the file was moved aside), {@code FILE_UNSAFE},
     *     {@code IO_FAILED}, {@code LOCK_TIMEOUT}
     */
    @Override
    public Optional<String> get(String key) {
        Path file = target();
        Optional<String> text = readText(file);
        if (text.isEmpty()) return Optional.empty();
        if (problem(text.get()) == null)
            return Optional.ofNullable(decode(text.get()).get(key));
        // Decided under the write lock, on a fresh read: another process may have replaced it meanwhile.
        return locked("write", null, (held, locked) -> {
            Optional<String> fresh = readText(locked);
            if (fresh.isEmpty()) return Optional.empty();
            String what = problem(fresh.get());
            if (what != null) throw setAside(locked, what);
            return Optional.ofNullable(decode(fresh.get()).get(key));
        });
    }

    /** Stores {@code value} under {@code key}, keeping every other key; durable when it returns. */
    @Override
    public void set(String key, String value) {
        update(data -> {
            data.put(key, value);
            return true;
        });
    }

    /**
     * Stores {@code value} under {@code key} (a pending sign-in, {@code …:pending:<key>}): the file keeps
     * no lifetime, so its {@code expiresAt} decides: every write drops the pending sign-ins expired by
     * this clock, or that are no record ({@code spec/token-store/README.md}, "Pending sign-ins by state").
     */
    @Override
    public void setExpiring(String key, String value, Duration lifetime) {
        set(key, value);
    }

    /** Reads and removes {@code key} under the file's write lock: of concurrent takes, one gets it. */
    @Override
    public Optional<String> take(String key) {
        @SuppressWarnings("unchecked")
        Optional<String>[] taken = new Optional[] {Optional.empty()};
        update(data -> {
            taken[0] = Optional.ofNullable(data.remove(key));
            return taken[0].isPresent();
        });
        return taken[0];
    }

    /** Drops the pending sign-ins by state whose {@code expiresAt} passed, or that are no record. */
    private static boolean dropExpiredPending(Map<String, String> data) {
        long now = System.currentTimeMillis();
        return data.entrySet()
                .removeIf(entry -> PENDING_BY_STATE.matcher(entry.getKey()).find()
                        && Json.parseObject(entry.getValue())
                                .map(m -> !(m.get("expiresAt") instanceof Number at) || at.doubleValue() <= now)
                                .orElse(true));
    }

    /** Removes {@code key}; writes nothing when it is absent. */
    @Override
    public void delete(String key) {
        update(data -> data.remove(key) != null);
    }

    /** Names the file, never a value. */
    @Override
    public String toString() {
        return "FileStorage[" + path + "]";
    }

    /** The options of a {@link FileStorage}; immutable: each method returns a new builder. */
    public static final class Builder {
        private final Path path;
        private Duration staleAfter = Duration.ofSeconds(10);
        private Duration lockTimeout = Duration.ofSeconds(30);
        private System.Logger logger;

        private Builder(Path path) {
            this.path = path;
        }

        private Builder copy() {
            Builder b = new Builder(path);
            b.staleAfter = staleAfter;
            b.lockTimeout = lockTimeout;
            b.logger = logger;
            return b;
        }

        /**
         * After how long a lock directory whose holder stopped touching it is taken over, when its owner
         * cannot be checked (no owner file, or another host); default 10 s, at least 2 s.
         */
        public Builder staleAfter(Duration staleAfter) {
            Builder b = copy();
            b.staleAfter = java.util.Objects.requireNonNull(staleAfter, "staleAfter");
            return b;
        }

        /** How long to wait for a lock held by a live process (default 30 s), then {@code LOCK_TIMEOUT}. */
        public Builder lockTimeout(Duration lockTimeout) {
            Builder b = copy();
            b.lockTimeout = java.util.Objects.requireNonNull(lockTimeout, "lockTimeout");
            return b;
        }

        /** The logger of warnings (paths and modes only, never a value). */
        public Builder logger(System.Logger logger) {
            Builder b = copy();
            b.logger = java.util.Objects.requireNonNull(logger, "logger");
            return b;
        }

        /**
         * The storage.
         *
         * @throws TokenManagerException {@code INVALID_OPTIONS} for a duration that is not positive
         */
        public FileStorage build() {
            return new FileStorage(this);
        }
    }
}
