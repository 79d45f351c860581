package io.github.tenantintegration.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * This process's identity (pid and host name) and the liveness test of another process on this
 * host: what tells a paused lock or intent holder (alive, waited for) from a dead one (taken over at
 * once). The same rule as the TypeScript kit's {@code process-identity.ts}, the Python kit's
 * {@code is_gone} and the Go kit's {@code internal/procid}.
 *
 * <p>Internal to the kit: not an API, it may change in any release.
 *
 * @see <a href="https://man7.org/linux/man-pages/man2/kill.2.html">kill(2): signal 0, an existence check</a>
 */
public final class ProcessIdentity {
    private static final String HOST = readHost();

    private ProcessIdentity() {}

    /** This process's id. */
    public static long pid() {
        return ProcessHandle.current().pid();
    }

    /**
     * This machine's host name, the kernel's node name as Node's {@code os.hostname()} and Python's
     * {@code socket.gethostname()} give it, read without a DNS lookup ({@code InetAddress} would
     * resolve it, and hang on a machine without DNS).
     */
    public static String host() {
        return HOST;
    }

    private static String readHost() {
        try {
            String name = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8)
                    .trim();
            if (!name.isEmpty()) return name;
        } catch (IOException | RuntimeException e) {
            // Not Linux: ask uname below.
        }
        String windows = System.getenv("COMPUTERNAME");
        if (windows != null && !windows.isBlank()) return windows.trim();
        try {
            Process uname =
                    new ProcessBuilder("uname", "-n").redirectErrorStream(true).start();
            try (InputStream out = uname.getInputStream()) {
                String name = new String(out.readAllBytes(), StandardCharsets.UTF_8).trim();
                if (uname.waitFor(5, TimeUnit.SECONDS) && uname.exitValue() == 0 && !name.isEmpty()) return name;
            }
        } catch (IOException e) {
            // No uname either.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "localhost";
    }

    /**
     * Whether process {@code pid} on {@code host} has exited: true only when {@code host} is this
     * machine's and no process of that id exists (what {@code kill(pid, 0)} failing with ESRCH says).
     * A process of another user, this process, or one on another host cannot be proven dead: it
     * counts as alive, and is waited for within the bounded waits.
     */
    public static boolean isGone(String host, long pid) {
        if (host == null || !host.equals(HOST) || pid <= 0 || pid == pid()) return false;
        return ProcessHandle.of(pid).isEmpty();
    }
}
