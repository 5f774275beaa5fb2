package dev.exactly.idempotency.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.time.Duration;

/**
 * Observes the attempts of an {@link IdempotentHttpClient}, for metrics and logs. Every method has a
 * no-op default; implementations must be fast and must not throw (exceptions are ignored).
 */
public interface IdempotentClientListener {

    IdempotentClientListener NOOP = new IdempotentClientListener() {};

    /**
     * One attempt of a logical request.
     *
     * @param key    the idempotency key it carries (the same on every attempt)
     * @param number the attempt's number, from 1
     * @param target where it goes
     */
    record Attempt(String key, int number, URI target) {}

    /** The attempt is about to be sent. */
    default void attemptStarted(Attempt attempt) {}

    /**
     * The attempt got an answer (final or not). {@code body} is the answer's bytes from
     * {@link IdempotentHttpClient}; the Spring adapters pass an empty array (they hand the body on unread).
     */
    default void attemptAnswered(Attempt attempt, int status, HttpHeaders headers, byte[] body) {}

    /** The attempt failed without an answer. */
    default void attemptFailed(Attempt attempt, IOException error) {}

    /** A retry was scheduled after {@code delay}; {@code retryAfter}: the server asked for it. */
    default void retryScheduled(Attempt attempt, Duration delay, boolean retryAfter) {}
}
