package dev.exactly.idempotency;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A store's view of one scope.
 *
 * @param key            the scope key
 * @param status         the state
 * @param fingerprint    the fingerprint of the request that claimed the key
 * @param owner          the current owner while {@link RecordStatus#PROCESSING}; the last owner after
 * @param createdAt      when the key was first claimed
 * @param leaseExpiresAt while processing: when another request may take over
 * @param expiresAt      when the record is forgotten (claim or finish time plus the retention)
 * @param response       the response to replay once finished
 */
public record IdempotencyRecord(
        ScopeKey key,
        RecordStatus status,
        Fingerprint fingerprint,
        @Nullable OwnerToken owner,
        Instant createdAt,
        @Nullable Instant leaseExpiresAt,
        Instant expiresAt,
        @Nullable StoredResponse response) {

    public IdempotencyRecord {
        if (status.isFinished() && response == null) {
            throw new IllegalArgumentException("a finished record carries its response");
        }
        if (status == RecordStatus.PROCESSING && (owner == null || leaseExpiresAt == null)) {
            throw new IllegalArgumentException("a processing record has an owner and a lease");
        }
    }

    /** Whether the record is processing and its lease has run out at {@code now}. */
    public boolean leaseExpired(Instant now) {
        return status == RecordStatus.PROCESSING && leaseExpiresAt != null && !now.isBefore(leaseExpiresAt);
    }
}
