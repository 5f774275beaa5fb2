package dev.exactly.idempotency.client;

import java.net.URI;
import java.net.http.HttpHeaders;
import java.util.Objects;

/**
 * The server answered, but the answer's body was larger than the client keeps
 * ({@link IdempotentHttpClient.Builder#maxAnswerBytes}); it was not read to its end. The status is the outcome
 * ({@link #status()}, with the answer's headers), and it is final: a retry with the same key would replay the
 * same answer. Raise the limit where such answers are expected, or find out why the server sends them.
 */
public final class AnswerTooLargeException extends IdempotencyClientException {
    private final int status;
    private final HttpHeaders headers;
    private final long limit;
    private final int attempts;
    private final URI uri;

    public AnswerTooLargeException(String key, int status, HttpHeaders headers, long limit, int attempts, URI uri) {
        super(
                key,
                uri + " answered " + status + " to Idempotency-Key " + key + " with a body larger than "
                        + limit
                        + " bytes, the client's limit (maxAnswerBytes): the body was not read, the status is the "
                        + "outcome, and a retry with the same key would get the same answer",
                null);
        this.status = status;
        this.headers = Objects.requireNonNull(headers, "headers");
        this.limit = limit;
        this.attempts = attempts;
        this.uri = Objects.requireNonNull(uri, "uri");
    }

    /** The answer's status: the request's outcome. */
    public int status() {
        return status;
    }

    /** The answer's headers. */
    public HttpHeaders headers() {
        return headers;
    }

    /** The client's limit the body went past, in bytes. */
    public long limit() {
        return limit;
    }

    /** Attempts made, this one included. */
    public int attempts() {
        return attempts;
    }

    /** Where the answer came from. */
    public URI uri() {
        return uri;
    }
}
