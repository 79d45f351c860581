package io.github.tenantintegration.conformance;

import io.github.tenantintegration.conformance.Actor.ActorException;
import io.github.tenantintegration.internal.Json;
import io.github.tenantintegration.tokenmanager.Binding;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The sessions feature of the actor ({@code spec/conformance/PROTOCOL.md}, "Sessions"): the kit's
 * {@link Sessions} beside the actor's manager, on the same storage, serving the sessions a {@code
 * sign-in} or {@code call} command names. Each session signs in as its own sandbox user ({@code
 * sandbox_user}), and each call checks that the tenant answers a session's token with that session's
 * user. The Node actor's {@code sessions.mjs} and the Go actor's {@code sessions.go}, command for
 * command.
 */
final class ActorSessions {
    /**
     * How many sessions one actor serves at once for a command: a server's users come together after
     * an expiry. Each has one request at a time in flight, so this also bounds the actor's connections
     * to the tenant, as a server's pool would: a few hundred connections opened at one instant overflow
     * the sandbox's accept queue, and the connections reset are no test of the kit.
     */
    static final int SESSIONS_AT_ONCE = 32;
    /** How many sign-ins of a command are in flight at once. */
    static final int SIGN_INS_AT_ONCE = 16;

    /** One session a command names: its id and the sandbox user it signs in as. */
    record Named(String id, String user) {}

    private final Sessions sessions;
    /** The ids of the sessions a command named: their managers are closed at the actor's exit. */
    private final java.util.Set<String> served = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final HttpClient http; // the actor's own: the authorize requests, redirects not followed
    private final String name;
    private final String tenant;
    private final AtomicLong refreshes;
    private final ExecutorService threads = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "actor-session");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * @param managers the builder of the actor's manager, given the sessions' storage, lock and client
     * @param http the actor's client for the authorize requests
     * @param refreshes the actor's count of refreshes (its managers' events)
     */
    ActorSessions(TokenManager.Builder managers, HttpClient http, String name, String tenant, AtomicLong refreshes) {
        this.sessions = Sessions.builder(managers).build();
        this.http = http;
        this.name = name;
        this.tenant = tenant;
        this.refreshes = refreshes;
    }

    /** The {@code sessions} of a command, or null when it has none. */
    static List<Named> sessionsOf(Map<String, Object> command) {
        if (!command.containsKey("sessions")) return null;
        List<Named> list = new ArrayList<>();
        if (command.get("sessions") instanceof List<?> given) {
            for (Object entry : given) {
                if (!(entry instanceof Map<?, ?> session)
                        || !(session.get("id") instanceof String id)
                        || session.get("user") == null) {
                    list.clear();
                    break;
                }
                list.add(new Named(id, String.valueOf(session.get("user"))));
            }
        }
        if (list.isEmpty())
            throw new ActorException("UNEXPECTED", "\"sessions\" must be a non-empty list of {\"id\",\"user\"}");
        return list;
    }

    /** A session's failure: its id and what failed. */
    private record Failure(String id, RuntimeException error) {}

    /** A task of one session. */
    private interface Task {
        void run(Named session) throws IOException, InterruptedException;
    }

    /** Runs {@code task} for every session, at most {@code limit} at once; the failures, each naming its session. */
    private List<Failure> eachSession(List<Named> list, int limit, Task task) {
        ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger next = new AtomicInteger();
        Runnable worker = () -> {
            for (int i = next.getAndIncrement(); i < list.size(); i = next.getAndIncrement()) {
                Named session = list.get(i);
                try {
                    task.run(session);
                } catch (RuntimeException e) {
                    failures.add(new Failure(session.id(), e));
                } catch (IOException e) {
                    failures.add(new Failure(
                            session.id(),
                            new ActorException(
                                    "UNEXPECTED",
                                    "a request failed (" + e.getClass().getSimpleName() + ")")));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failures.add(new Failure(session.id(), new ActorException("UNEXPECTED", "interrupted")));
                    return;
                }
            }
        };
        List<Future<?>> running = new ArrayList<>();
        for (int i = 0; i < Math.min(limit, list.size()); i++) running.add(threads.submit(worker));
        for (Future<?> each : running) {
            try {
                each.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ActorException("UNEXPECTED", "interrupted");
            } catch (java.util.concurrent.ExecutionException e) {
                throw new ActorException("UNEXPECTED", String.valueOf(e.getCause()));
            }
        }
        return new ArrayList<>(failures);
    }

    /** The answer to a command some of whose sessions failed: the first failure's kit code, and how many failed. */
    private static RuntimeException firstFailure(List<Failure> failures, int of) {
        Failure first = failures.get(0);
        String code = first.error() instanceof TokenManagerException kit
                ? kit.code().name()
                : first.error() instanceof ActorException own ? own.code : "UNEXPECTED";
        return new ActorException(
                code,
                failures.size() + " of " + of + " sessions failed; the first: session " + first.id() + ": "
                        + first.error().getMessage());
    }

    /**
     * Requests the authorize URL as the sandbox's {@code user} ({@code sandbox_user}: the sandbox
     * approves at once) without following the redirect, and returns the callback URL its {@code
     * Location} names (never printed: it holds the code and state).
     */
    private String approve(URI authorize, String user) throws IOException, InterruptedException {
        URI asUser = URI.create(authorize + "&sandbox_user=" + URLEncoder.encode(user, StandardCharsets.UTF_8));
        HttpResponse<Void> response = http.send(
                HttpRequest.newBuilder(asUser)
                        .timeout(Duration.ofSeconds(30))
                        .header(ActorHttpClient.ACTOR_HEADER, name)
                        .build(),
                HttpResponse.BodyHandlers.discarding());
        String location = response.headers().firstValue("Location").orElse(null);
        if ((response.statusCode() != 302 && response.statusCode() != 303) || location == null) {
            throw new ActorException(
                    "UNEXPECTED",
                    "the authorize request was answered " + response.statusCode() + " without a redirect");
        }
        return authorize.resolve(location).toString();
    }

    /**
     * Closes the manager of every session a command named (its intent's beats and retried writes
     * stop), as a server does when it shuts down: {@code Sessions} has no close of its own.
     */
    void close() {
        for (String id : served) sessions.manager(id).close();
    }

    /** {@code sign-in} with sessions: each begun with a browser binding, approved as its user, completed with that binding. */
    Map<String, Object> signIn(List<Named> list) {
        list.forEach(session -> served.add(session.id()));
        List<Failure> failures = eachSession(list, SIGN_INS_AT_ONCE, session -> {
            Sessions.Started started = sessions.beginSignIn(session.id(), null);
            String callback = approve(started.request().url(), session.user());
            sessions.completeSignIn(new Sessions.Callback(callback, started.binding(), session.id()));
        });
        if (!failures.isEmpty()) throw firstFailure(failures, list.size());
        return Output.map("signedIn", list.size());
    }

    /**
     * {@code call} with sessions: every session's client asks for the user at once, as a server serving
     * all its users does; {@code crossed} lists each session answered with another user than its own.
     */
    Map<String, Object> call(List<Named> list) {
        list.forEach(session -> served.add(session.id()));
        long before = refreshes.get();
        AtomicInteger status = new AtomicInteger(200);
        ConcurrentLinkedQueue<Map<String, Object>> crossed = new ConcurrentLinkedQueue<>();
        URI user = URI.create(tenant.replaceAll("/+$", "") + "/api/v1/auth/user");
        List<Failure> failures = eachSession(list, SESSIONS_AT_ONCE, session -> {
            HttpResponse<String> response = sessions.httpClient(session.id())
                    .send(
                            HttpRequest.newBuilder(user)
                                    .timeout(Duration.ofSeconds(30))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                status.compareAndSet(200, response.statusCode());
                return;
            }
            Object got = Json.parseObject(response.body())
                    .orElseThrow(() -> new ActorException("UNEXPECTED", "the user's answer is not a JSON object"))
                    .get("id");
            if (!session.user().equals(String.valueOf(got)))
                crossed.add(Output.map("id", session.id(), "user", session.user(), "got", String.valueOf(got)));
        });
        if (!failures.isEmpty()) throw firstFailure(failures, list.size());
        return Output.map(
                "status",
                status.get(),
                "refreshed",
                refreshes.get() > before,
                "sessions",
                list.size(),
                "crossed",
                new ArrayList<>(crossed));
    }

    /** Whether {@code work} fails with INVALID_SESSION_ID. */
    private static boolean refusedBy(Supplier<?> work) {
        try {
            work.get();
            return false;
        } catch (TokenManagerException e) {
            return "INVALID_SESSION_ID".equals(e.code().name());
        }
    }

    /**
     * {@code refuse-ids}: gives each id to every call of the sessions object that takes one; each must
     * refuse it with INVALID_SESSION_ID. {@code accepted} lists the ids some call took.
     */
    Map<String, Object> refuseIds(Map<String, Object> command) {
        if (!(command.get("ids") instanceof List<?> ids) || ids.isEmpty())
            throw new ActorException("UNEXPECTED", "\"ids\" must be a non-empty list of strings");
        int refused = 0;
        List<String> accepted = new ArrayList<>();
        for (Object value : ids) {
            String id = value instanceof String text ? text : null;
            List<Supplier<?>> calls = List.of(
                    () -> sessions.manager(id),
                    () -> sessions.beginSignIn(id, null),
                    // The id is checked before the callback is looked at.
                    () -> sessions.completeSignIn(new Sessions.Callback(sessions.redirectUri(), null, id)),
                    () -> sessions.httpClient(id),
                    () -> sessions.isSignedIn(id),
                    () -> sessions.accessToken(id),
                    () -> {
                        sessions.signOut(id);
                        return null;
                    },
                    () -> {
                        sessions.revoke(id);
                        return null;
                    });
            if (calls.stream().allMatch(ActorSessions::refusedBy)) refused++;
            else accepted.add(String.valueOf(value));
        }
        return Output.map("refused", refused, "accepted", accepted);
    }

    /** The kit's code of a completion's outcome: {@code accepted} when it succeeded. */
    private static String outcomeOf(Runnable completion) {
        try {
            completion.run();
            return "accepted";
        } catch (TokenManagerException e) {
            return e.code().name();
        } catch (RuntimeException e) {
            return "UNEXPECTED";
        }
    }

    /**
     * {@code replay-callback}: begins a sign-in for a session of its own, has the tenant approve it as
     * {@code user}, and completes the callback with another browser's binding (refused before any
     * exchange), then with the right one (the sign-in is used up): the login CSRF of RFC 9700 §4.7.1.
     */
    Map<String, Object> replayCallback(Map<String, Object> command) {
        String id = "replayed." + name;
        Sessions.Started started = sessions.beginSignIn(id, null);
        String callback;
        try {
            callback = approve(started.request().url(), String.valueOf(command.get("user")));
        } catch (IOException e) {
            throw new ActorException(
                    "UNEXPECTED",
                    "the authorize request failed (" + e.getClass().getSimpleName() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ActorException("UNEXPECTED", "interrupted");
        }
        String refused =
                outcomeOf(() -> sessions.completeSignIn(new Sessions.Callback(callback, Binding.random(), id)));
        String after = outcomeOf(() -> sessions.completeSignIn(new Sessions.Callback(callback, started.binding(), id)));
        return Output.map("refused", refused, "after", after, "signedIn", sessions.isSignedIn(id));
    }
}
