package dev.exactly.idempotency;

/** What a guarded action tells the engine to do with its key. */
public sealed interface Outcome {

    /** The response to hand to this caller. */
    StoredResponse response();

    /** Record the response as {@link RecordStatus#COMPLETED} and replay it to every retry. */
    static Outcome complete(StoredResponse response) {
        return new Complete(response);
    }

    /** Record a terminal failure (e.g. a decline) as {@link RecordStatus#FAILED}; replayed too. */
    static Outcome fail(StoredResponse response) {
        return new Fail(response);
    }

    /**
     * Nothing happened that a retry could repeat (a validation error, a failure before any side
     * effect): delete the record so a retry runs again, and answer this caller with {@code response}.
     */
    static Outcome release(StoredResponse response) {
        return new Release(response);
    }

    record Complete(StoredResponse response) implements Outcome {}

    record Fail(StoredResponse response) implements Outcome {}

    record Release(StoredResponse response) implements Outcome {}
}
