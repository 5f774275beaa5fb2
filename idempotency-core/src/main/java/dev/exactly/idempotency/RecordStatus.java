package dev.exactly.idempotency;

/** The states of an idempotency record. A released record is deleted, so it has no state. */
public enum RecordStatus {
    /** Claimed by an owner whose lease may or may not have expired. */
    PROCESSING,
    /** Finished with a response that is replayed until the retention ends. */
    COMPLETED,
    /** Finished with a terminal failure (e.g. a card decline) that is replayed like a success. */
    FAILED;

    public boolean isFinished() {
        return this != PROCESSING;
    }
}
