package dev.exactly.payments.keys;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What the durable tier knows about one key on one idempotent route.
 *
 * @param key                  the key as the client sent it
 * @param route                the route template ({@link IdempotentRoutes#CHARGES}, {@link IdempotentRoutes#REFUNDS})
 * @param status               {@code processing}, {@code completed}, {@code failed}, or {@code "expired"} when
 *                             only the business row is left
 * @param checkpoint           how far the request got (the charge's or refund's recovery point)
 * @param created              when the record (or, once it expired, the row) was created
 * @param expires              when the record stops being replayed, or {@code null} once expired and while
 *                             the request is in progress (an open phase never expires)
 * @param leaseExpires         when the owner's lease ends, for a request in flight
 * @param replays              how often its answer was replayed, by either tier
 * @param fingerprintAlgorithm the record's fingerprint algorithm, or {@code null} once expired
 * @param responseStatus       the recorded answer's status, or {@code null}
 * @param resource             the charge or refund the request created, or {@code null}
 */
public record KeyState(
        String key,
        String route,
        String status,
        @Nullable String checkpoint,
        @Nullable Instant created,
        @Nullable Instant expires,
        @Nullable Instant leaseExpires,
        long replays,
        @Nullable String fingerprintAlgorithm,
        @Nullable Integer responseStatus,
        @Nullable Resource resource) {

    /**
     * The resource a request created.
     *
     * @param type   {@code charge}, {@code refund}, {@code capture} or {@code void}
     * @param status its status now
     */
    public record Resource(String type, String id, String status) {}
}
