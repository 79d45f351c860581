package io.github.tenantintegration.filestorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.internal.ProcessIdentity;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.Held;
import io.github.tenantintegration.tokenmanager.StorageException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileStorageTest {
    @TempDir
    Path dir;

    @Test
    void keysAreKeptInOneFile0600InDirectories0700() throws Exception {
        Path file = dir.resolve("a/b/tokens.json");
        FileStorage storage = FileStorage.of(file);
        storage.set("tenant-integration:x:tokens", "{\"v\":1}");
        storage.set("tenant-integration:x:pending", "p");
        storage.delete("tenant-integration:x:pending");
        assertEquals(Optional.of("{\"v\":1}"), storage.get("tenant-integration:x:tokens"));
        assertEquals(Optional.empty(), storage.get("tenant-integration:x:pending"));
        assertEquals("{\"tenant-integration:x:tokens\":\"{\\\"v\\\":1}\"}", Files.readString(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())));
        try (Stream<Path> left = Files.list(file.getParent())) {
            assertEquals(
                    List.of("tokens.json"),
                    left.map(p -> p.getFileName().toString()).toList(),
                    "no lock or temporary file left");
        }
    }

    @Test
    void aFileOthersMayReadIsTightened() throws Exception {
        Path file = dir.resolve("tokens.json");
        Files.writeString(file, "{}");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        FileStorage.of(file).get("k");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }

    @Test
    void aCorruptFileIsMovedAsideAndReportedOnce() throws Exception {
        Path file = dir.resolve("tokens.json");
        Files.writeString(file, "{\"secret-looking\": 42");
        FileStorage storage = FileStorage.of(file);
        StorageException e = assertThrows(StorageException.class, () -> storage.get("k"));
        assertEquals(ErrorCode.FILE_CORRUPT, e.code());
        assertTrue(e.reset());
        assertTrue(Files.exists(Path.of(e.movedTo())));
        assertFalse(e.getMessage().contains("secret-looking"));
        assertEquals(Optional.empty(), storage.get("k"));
    }

    @Test
    void theLockDirectoryHoldsTheOwnerFileOfTheFormat() {
        Path file = dir.resolve("tokens.json");
        FileStorage storage = FileStorage.of(file);
        AtomicReference<String> owner = new AtomicReference<>();
        storage.lock().withLock("any", held -> {
            try {
                owner.set(Files.readString(dir.resolve("tokens.json.refresh.lock/owner")));
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
            assertTrue(held.isHeld());
            return null;
        });
        assertTrue(
                owner.get()
                        .matches("\\{\"pid\":" + ProcessIdentity.pid() + ",\"host\":\""
                                + ProcessIdentity.host().replace(".", "\\.")
                                + "\",\"id\":\"[0-9a-f]{32}\",\"since\":\\d+}"),
                owner.get());
        assertFalse(Files.exists(dir.resolve("tokens.json.refresh.lock")));
    }

    @Test
    void aLockWhoseOwnerExitedIsTakenOverAtOnce() throws Exception {
        Process exited = new ProcessBuilder("true").start();
        exited.waitFor();
        Path lock = dir.resolve("tokens.json.refresh.lock");
        Files.createDirectory(lock);
        Files.writeString(
                lock.resolve("owner"),
                new DirLock.Owner(exited.pid(), ProcessIdentity.host(), "0".repeat(32), 1).json());
        FileStorage storage = FileStorage.builder(dir.resolve("tokens.json"))
                .lockTimeout(Duration.ofSeconds(2))
                .build();
        long started = System.nanoTime();
        assertEquals("ran", storage.lock().withLock("any", held -> "ran"));
        assertTrue(System.nanoTime() - started < Duration.ofSeconds(1).toNanos());
    }

    @Test
    void aLockOfALiveOwnerIsNeverTakenOverHoweverStaleAndTheTimeoutNamesIt() throws Exception {
        Process alive = new ProcessBuilder("sleep", "30").start();
        try {
            Path lock = dir.resolve("tokens.json.refresh.lock");
            Files.createDirectory(lock);
            Files.writeString(
                    lock.resolve("owner"),
                    new DirLock.Owner(alive.pid(), ProcessIdentity.host(), "0".repeat(32), 1).json());
            Files.setLastModifiedTime(lock, java.nio.file.attribute.FileTime.fromMillis(1));
            FileStorage storage = FileStorage.builder(dir.resolve("tokens.json"))
                    .staleAfter(Duration.ofSeconds(2))
                    .lockTimeout(Duration.ofMillis(500))
                    .build();
            StorageException e =
                    assertThrows(StorageException.class, () -> storage.lock().withLock("any", held -> "ran"));
            assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
            assertTrue(e.getMessage().contains("process " + alive.pid()), e.getMessage());
        } finally {
            alive.destroyForcibly();
        }
    }

    @Test
    void aStaleLockWithoutAnOwnerFileIsTakenOverByItsMtime() throws Exception {
        Path lock = dir.resolve("tokens.json.refresh.lock");
        Files.createDirectory(lock);
        Files.setLastModifiedTime(lock, java.nio.file.attribute.FileTime.fromMillis(1));
        FileStorage storage = FileStorage.builder(dir.resolve("tokens.json"))
                .lockTimeout(Duration.ofSeconds(2))
                .build();
        assertEquals("ran", storage.lock().withLock("any", held -> "ran"));
    }

    @Test
    void aHolderWhoseLockWasTakenOverKnowsIt() {
        FileStorage storage = FileStorage.of(dir.resolve("tokens.json"));
        Path owner = dir.resolve("tokens.json.refresh.lock/owner");
        boolean[] seen = new boolean[2];
        storage.lock().withLock("any", held -> {
            seen[0] = held.isHeld();
            try {
                Files.writeString(owner, new DirLock.Owner(1, "elsewhere", "f".repeat(32), 1).json());
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
            seen[1] = held.isHeld();
            return null;
        });
        assertTrue(seen[0]);
        assertFalse(seen[1]);
        assertTrue(Files.exists(owner), "another's lock is not removed");
        assertTrue(Held.ALWAYS.isHeld());
    }

    @Test
    void aSymlinkedTokenFileIsWrittenThroughTheLink() throws Exception {
        Path real = dir.resolve("real/tokens.json");
        Files.createDirectories(real.getParent());
        Path link = dir.resolve("link.json");
        Files.createSymbolicLink(link, real);
        FileStorage.of(link).set("k", "v");
        assertTrue(Files.isSymbolicLink(link));
        assertEquals("{\"k\":\"v\"}", Files.readString(real));
    }
}
