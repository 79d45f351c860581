package io.github.tenantintegration.conformance;

import io.github.tenantintegration.internal.Json;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ResourceBundle;
import java.util.concurrent.locks.ReentrantLock;

/** The actor's standard output: one JSON object per line, whole lines only, from any thread. */
final class Output {
    private final PrintStream out =
            new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);
    private final ReentrantLock lock = new ReentrantLock();

    void say(Map<String, ?> message) {
        String line = Json.write(message);
        lock.lock();
        try {
            out.print(line);
            out.print('\n');
            out.flush();
        } finally {
            lock.unlock();
        }
    }

    static Map<String, Object> map(Object... pairs) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) out.put((String) pairs[i], pairs[i + 1]);
        return out;
    }

    /** Every message of the kit's loggers as a protocol log event, at every level. */
    System.Logger logger(String name) {
        return new System.Logger() {
            @Override
            public String getName() {
                return name;
            }

            @Override
            public boolean isLoggable(Level level) {
                return true;
            }

            @Override
            public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
                say(map(
                        "event",
                        "log",
                        "level",
                        level(level),
                        "message",
                        message + (thrown == null ? "" : " (" + thrown + ")")));
            }

            @Override
            public void log(Level level, ResourceBundle bundle, String format, Object... params) {
                say(map(
                        "event",
                        "log",
                        "level",
                        level(level),
                        "message",
                        params == null || params.length == 0
                                ? format
                                : java.text.MessageFormat.format(format, params)));
            }
        };
    }

    private static String level(System.Logger.Level level) {
        return switch (level) {
            case ERROR -> "error";
            case WARNING -> "warning";
            case INFO -> "info";
            default -> "debug";
        };
    }
}
