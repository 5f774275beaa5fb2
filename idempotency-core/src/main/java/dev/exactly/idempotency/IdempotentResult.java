package dev.exactly.idempotency;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What {@link IdempotencyEngine#execute} returns.
 *
 * @param response  the response for this caller
 * @param kind      whether it was executed now (recorded or not), or replayed
 * @param expiresAt when the record is forgotten; {@code null} when nothing was recorded
 */
public record IdempotentResult(
        StoredResponse response, Kind kind, @Nullable Instant expiresAt) {

    /** How the response came about. */
    public enum Kind {
        /** The action ran now and its outcome was recorded. */
        EXECUTED,
        /** A recorded outcome was replayed; the action did not run. */
        REPLAYED,
        /** The action ran now and asked for release: nothing was recorded. */
        RELEASED,
        /**
         * The action ran now, but the store did not answer when its outcome was recorded. The response is
         * the action's own; recording it goes on in the background with the owner token (see
         * {@link IdempotencyListener#onRepair}), so a retry may meanwhile find the key in flight.
         */
        UNRECORDED
    }

    public boolean replayed() {
        return kind == Kind.REPLAYED;
    }
}
