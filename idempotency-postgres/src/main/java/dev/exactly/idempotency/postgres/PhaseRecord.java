package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A phase as an operator or a status page sees it: the record, its last checkpoint, and recovery's
 * bookkeeping.
 *
 * @param record         the idempotency record (a phase in progress never expires: its {@code expiresAt}
 *                       is the end of time until it is finished)
 * @param checkpoint     the last checkpoint committed, or {@code null}
 * @param attempts       failed attempts so far
 * @param lastError      the error of the last failed attempt, or {@code null}
 * @param deadLetteredAt when recovery gave up, or {@code null}
 */
public record PhaseRecord(
        IdempotencyRecord record,
        @Nullable Checkpoint checkpoint,
        int attempts,
        @Nullable String lastError,
        @Nullable Instant deadLetteredAt) {

    public PhaseRecord {
        Objects.requireNonNull(record, "record");
    }

    public ScopeKey key() {
        return record.key();
    }

    public RecordStatus status() {
        return record.status();
    }

    /** Whether recovery gave up on it. */
    public boolean deadLettered() {
        return deadLetteredAt != null;
    }

    /** Whether it is unfinished work that recovery resumes (a checkpoint or a failed attempt was committed). */
    public boolean inProgress() {
        return record.status() == RecordStatus.PROCESSING && (checkpoint != null || attempts > 0);
    }
}
