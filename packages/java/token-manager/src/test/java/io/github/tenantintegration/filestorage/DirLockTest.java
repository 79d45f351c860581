package io.github.tenantintegration.filestorage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock directory of the token file on a disk that stops answering (issue 36: a network disk): a
 * holder that lets its lock go while the disk does not answer cannot remove the directory, which
 * names it, a live owner that nobody else may take over; it removes it itself once the disk answers.
 * The disk's outage is a symbolic link swapped, in one rename, for a link to a regular file: every
 * access under it fails (ENOTDIR), as the conformance suite's {@code disk: unreachable} does (and as
 * the Go kit's dirlock_test.go, dir-lock.test.ts and test_file_lock_unreachable.py do).
 */
class DirLockTest {
    @TempDir
    Path root;

    private Path state;
    private Path disk;
    private Path dead;
    private Path file;
    private Path onDisk;

    @BeforeEach
    void networkDisk() throws IOException {
        state = root.resolve("state");
        disk = Files.createDirectory(root.resolve("disk"));
        dead = Files.createFile(root.resolve("unreachable"));
        back();
        file = state.resolve("tokens.json");
        onDisk = disk.resolve("tokens.json.refresh.lock");
    }

    private void link(Path target) throws IOException {
        Path next = root.resolve("state.next");
        Files.createSymbolicLink(next, target);
        Files.move(next, state, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private void away() throws IOException {
        link(dead);
    }

    private void back() throws IOException {
        link(disk);
    }

    private Path lock() {
        return state.resolve("tokens.json.refresh.lock");
    }

    /** Holds the lock, and lets it go while the disk does not answer. */
    private void holdWhileAway() throws IOException {
        DirLock.hold(lock(), file, Duration.ofSeconds(2), Duration.ofSeconds(3), null, held -> {
            try {
                away();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return null;
        });
        back();
        // Left behind, naming this live process: never taken over by another.
        assertTrue(Files.isDirectory(onDisk), "the lock directory is there when the disk answers again");
    }

    @Test
    void aLockLetGoWhileTheDiskDoesNotAnswerIsRemovedByItsHolderOnceItAnswersUnasked() throws Exception {
        holdWhileAway();
        long deadline = System.nanoTime() + Duration.ofMillis(2500).toNanos();
        while (Files.exists(onDisk) && System.nanoTime() < deadline) Thread.sleep(50);
        assertFalse(
                Files.exists(onDisk),
                "the lock directory its holder let go is still there after the disk answered: every process"
                        + " waits for it until LOCK_TIMEOUT");
    }

    @Test
    void aLockLeftBehindIsRemovedAtOnceWhenItsHolderTakesItAgainInsteadOfWaitingForItself() throws Exception {
        holdWhileAway();
        AtomicBoolean taken = new AtomicBoolean();
        // A lock timeout shorter than the second between two tries of the directory left behind.
        DirLock.hold(lock(), file, Duration.ofSeconds(2), Duration.ofMillis(300), null, held -> {
            taken.set(true);
            return null;
        });
        assertTrue(taken.get(), "the holder waited for its own lock left behind");
    }
}
