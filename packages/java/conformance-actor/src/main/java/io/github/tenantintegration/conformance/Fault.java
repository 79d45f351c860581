package io.github.tenantintegration.conformance;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;
import sun.misc.Signal;

/**
 * The fault an {@code arm} command sets for the next refresh: a point of the refresh protocol, and
 * what to do there ({@code stop}: SIGSTOP this process until the orchestrator's SIGCONT; {@code hang}:
 * SIGSTOP and never go on; {@code go}: say so and go on).
 */
final class Fault {
    private final Output out;
    private final ReentrantLock lock = new ReentrantLock();
    private String point;
    private String then;
    private boolean answered;

    /** Counted down by every SIGCONT: the resume of a stop. */
    private volatile CountDownLatch resumed = new CountDownLatch(1);

    Fault(Output out) {
        this.out = out;
        Signal.handle(new Signal("CONT"), signal -> resumed.countDown());
    }

    /** Arms the fault; null when it is armed, else the protocol's error code. */
    String arm(String point, String then) {
        if (!point.equals("locked")
                && !point.equals("sending")
                && !point.equals("in-flight")
                && !point.equals("answered")) {
            return "UNSUPPORTED";
        }
        if (!then.equals("stop") && !then.equals("hang") && !then.equals("go")) return "UNEXPECTED";
        lock.lock();
        try {
            this.point = point;
            this.then = then;
            this.answered = false;
        } finally {
            lock.unlock();
        }
        return null;
    }

    /** What to do at {@code point}, once; null when the fault is not armed there. */
    String take(String point) {
        lock.lock();
        try {
            if (!point.equals(this.point)) return null;
            this.point = null;
            return then;
        } finally {
            lock.unlock();
        }
    }

    void reach(String point) {
        String action = take(point);
        if (action != null) halt(point, action);
    }

    /** A refresh request is about to leave: the answer of the last one is no longer pending. */
    void sending() {
        lock.lock();
        try {
            answered = false;
        } finally {
            lock.unlock();
        }
        reach("sending");
    }

    /** The tenant answered a refresh 200: the next write of tokens is that answer's (the point {@code answered}). */
    void answeredOk() {
        lock.lock();
        try {
            answered = "answered".equals(point);
        } finally {
            lock.unlock();
        }
    }

    /** Whether this write of tokens is the answered refresh's (once). */
    boolean takeAnswered() {
        lock.lock();
        try {
            boolean was = answered;
            answered = false;
            return was;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Says where, then stops this process until SIGCONT (the thread that reached the point waits for
     * the SIGCONT too: the stop lands a moment after kill returns, and this thread must not go on in that
     * moment), never goes on, or goes on at once.
     */
    void halt(String point, String action) {
        CountDownLatch latch = new CountDownLatch(1);
        resumed = latch;
        out.say(Output.map("event", "at", "point", point));
        if (action.equals("go")) return;
        stopSelf();
        if (action.equals("hang")) {
            while (true) {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // Hang on: the orchestrator kills this process.
                }
            }
        }
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void stopSelf() {
        try {
            new ProcessBuilder(
                            "kill",
                            "-STOP",
                            Long.toString(ProcessHandle.current().pid()))
                    .start()
                    .waitFor();
        } catch (IOException e) {
            throw new IllegalStateException("cannot stop this process", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
