package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.internal.Json;
import io.github.tenantintegration.internal.Redact;
import java.io.ByteArrayOutputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Token and revocation requests: sent, their answer read within a request timeout that counts only
 * the time this process ran, and classified (RFC 6749 §5.1, §5.2; RFC 7009 §2.2).
 */
final class TokenHttp {
    /** The most read of an answer of the token endpoint. */
    static final int MAX_BODY = 1 << 20;

    /** The longest timer step: a tick later than this plus a second means the process was stopped. */
    private static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private static final long PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private TokenHttp() {}

    /**
     * Sends a token request ({@code POST /oauth/token}) and processes its answer into a new token record
     * ({@link #processTokenResponse}); {@code origin} is the record a refresh starts from (null for the
     * code exchange).
     */
    static TokenRecord requestTokens(
            TokenManager m, String body, List<String> secrets, TokenRecord origin, int attempt) {
        String text = post(m, "/oauth/token", body, "application/json", secrets, attempt);
        return processTokenResponse(m, text, origin);
    }

    /**
     * A token response as a new token record (RFC 6749 §5.1): expiry counts from the local receive
     * time, and a refresh that did not rotate keeps the refresh token it was made with. {@code origin}
     * is the record a refresh started from (null for a sign-in).
     *
     * @throws TokenManagerException {@code INVALID_RESPONSE} when the text is not a token response
     */
    static TokenRecord processTokenResponse(TokenManager m, String text, TokenRecord origin) {
        Map<String, Object> members = Json.parseObject(text)
                .orElseThrow(() -> new TokenManagerException(
                        ErrorCode.INVALID_RESPONSE, "the token response is not a JSON object"));
        TokenRecord.Fields f = TokenRecord.fields(members, origin == null ? null : origin.refreshToken);
        String id = States.random();
        String session = origin == null ? id : origin.session;
        long seq = origin == null ? 0 : origin.seq + 1;
        return new TokenRecord(
                f.accessToken(),
                f.refreshToken(),
                f.tokenType(),
                f.expiresIn(),
                f.scope(),
                Math.round(m.nowMs()),
                id,
                session,
                seq);
    }

    /** An answer: its status, body text and {@code Retry-After}. */
    record Answer(int status, String text, Optional<String> retryAfter) {
        @Override
        public String toString() {
            return "Answer[status=" + status + "]";
        }
    }

    /**
     * Sends a POST to the tenant and returns the text of a 2xx answer; any other answer as its error.
     *
     * @throws TransientException no answer (with {@code sent} false when no connection could be made),
     *     429 or 5xx (429 and 503 not sent)
     * @throws OAuthException an RFC 6749 §5.2 error body
     * @throws TokenManagerException {@code INVALID_RESPONSE} for any other answer
     */
    static String post(
            TokenManager m, String path, String body, String contentType, List<String> secrets, int attempt) {
        long started = System.nanoTime();
        Answer answer;
        try {
            answer = within(m, path, body, contentType);
        } catch (NoAnswer e) {
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            m.log(
                    System.Logger.Level.ERROR,
                    "POST " + path + " no answer",
                    "ms",
                    ms,
                    "attempt",
                    attempt,
                    "why",
                    e.kind);
            throw new TransientException(0, attempt, !e.notSent, null, Scrubbed.of(e.getCause(), m.known(secrets)));
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        m.log(System.Logger.Level.DEBUG, "POST " + path, "status", answer.status(), "ms", ms, "attempt", attempt);
        int status = answer.status();
        if (status >= 200 && status < 300) return answer.text();
        if (status == 429 || status >= 500) {
            // 429 and 503 say the tenant did not handle the request (RFC 6585 §4, RFC 9110 §15.6.4): the
            // refresh token it carried is unused, so it may be sent again. Any other 5xx may come after
            // the tenant rotated the token.
            boolean sent = status != 429 && status != 503;
            throw new TransientException(status, attempt, sent, retryAfter(answer.retryAfter(), m.nowMs()), null);
        }
        if (status >= 400) {
            Optional<OAuthFields> fields =
                    OAuthFields.of(Json.parseObject(answer.text()).orElse(Map.of()));
            if (fields.isPresent()) {
                List<String> all = m.known(secrets);
                OAuthFields f = fields.get();
                String error = Redact.text(f.error(), all);
                String description = Redact.text(f.description(), all);
                String text = error + (description == null || description.isEmpty() ? "" : " (" + description + ")");
                throw new OAuthException(
                        ErrorCode.OAUTH_ERROR,
                        "HTTP " + status + ": " + text,
                        status,
                        error,
                        description,
                        Redact.text(f.uri(), all));
            }
        }
        throw new TokenManagerException(
                ErrorCode.INVALID_RESPONSE, path + " answered HTTP " + status + " without an OAuth error body");
    }

    /** The RFC 6749 §5.2 error fields (and §4.1.2.1 on a callback). */
    record OAuthFields(String error, String description, String uri) {
        static Optional<OAuthFields> of(Map<String, ?> members) {
            if (!(members.get("error") instanceof String error) || error.isEmpty()) return Optional.empty();
            String description = members.get("error_description") instanceof String d ? d : null;
            String uri = members.get("error_uri") instanceof String u ? u : null;
            return Optional.of(new OAuthFields(error, description, uri));
        }
    }

    /** No answer: why, and whether the request cannot have left. */
    static final class NoAnswer extends Exception {
        private static final long serialVersionUID = 1L;
        final String kind;
        final boolean notSent;

        NoAnswer(String kind, boolean notSent, Throwable cause) {
            super(kind, cause, false, false);
            this.kind = kind;
            this.notSent = notSent;
        }
    }

    /**
     * Sends the request and reads the answer, bounded by the request timeout counted in time the
     * process ran: a wait that ends far later than asked means the process was stopped (SIGSTOP, a
     * suspended machine, a debugger); that time is not the tenant's, and the wait only starts again,
     * so that an answer that arrived meanwhile is read.
     */
    static Answer within(TokenManager m, String path, String body, String contentType) throws NoAnswer {
        HttpRequest request = HttpRequest.newBuilder(URI.create(m.origin + path))
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
                .header("Accept", "application/json")
                .header("Content-Type", contentType)
                .build();
        CompletableFuture<HttpResponse<byte[]>> future;
        try {
            future = m.http.sendAsync(request, info -> new LimitedBody(MAX_BODY));
        } catch (RuntimeException e) {
            throw new NoAnswer("connection failed", false, e);
        }
        long timeout = m.requestTimeout.toNanos();
        long step = Math.min(timeout, STEP_NANOS);
        long ran = 0;
        long last = System.nanoTime();
        while (true) {
            try {
                HttpResponse<byte[]> response = future.get(Math.min(step, timeout - ran), TimeUnit.NANOSECONDS);
                return new Answer(
                        response.statusCode(),
                        new String(response.body(), StandardCharsets.UTF_8),
                        response.headers().firstValue("Retry-After"));
            } catch (TimeoutException e) {
                long now = System.nanoTime();
                long gap = now - last;
                last = now;
                if (gap > step + PAUSE_NANOS) continue; // stopped meanwhile: not the tenant's time
                ran += gap;
                if (ran >= timeout) {
                    future.cancel(true);
                    throw new NoAnswer("timeout", false, e);
                }
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                throw new NoAnswer(notSent(cause) ? "no connection" : "connection failed", notSent(cause), cause);
            } catch (InterruptedException e) {
                future.cancel(true);
                Thread.currentThread().interrupt();
                throw new NoAnswer("interrupted", false, e);
            }
        }
    }

    /** The request cannot have reached the tenant: no connection could be made. */
    static boolean notSent(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof ConnectException
                    || e instanceof HttpConnectTimeoutException
                    || e instanceof UnresolvedAddressException
                    || e instanceof java.net.UnknownHostException) {
                return true;
            }
        }
        return false;
    }

    /** A {@code Retry-After} value: seconds or an HTTP date (RFC 9110 §10.2.3); null without one. */
    static Duration retryAfter(Optional<String> header, double nowMs) {
        if (header.isEmpty()) return null;
        String value = header.get().trim();
        if (value.matches("\\d{1,9}")) return Duration.ofSeconds(Long.parseLong(value));
        try {
            long at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME)
                    .toInstant()
                    .toEpochMilli();
            return at > nowMs ? Duration.ofMillis((long) (at - nowMs)) : null;
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    /** A body of at most {@code limit} bytes; a longer one fails the request. */
    static final class LimitedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final int limit;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private Flow.Subscription subscription;

        LimitedBody(int limit) {
            this.limit = limit;
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            this.subscription = subscription;
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> buffers) {
            for (ByteBuffer buffer : buffers) {
                if (bytes.size() + buffer.remaining() > limit) {
                    subscription.cancel();
                    result.completeExceptionally(
                            new java.io.IOException("the answer is longer than " + limit + " bytes"));
                    return;
                }
                byte[] chunk = new byte[buffer.remaining()];
                buffer.get(chunk);
                bytes.write(chunk, 0, chunk.length);
            }
        }

        @Override
        public void onError(Throwable error) {
            result.completeExceptionally(error);
        }

        @Override
        public void onComplete() {
            result.complete(bytes.toByteArray());
        }
    }
}
