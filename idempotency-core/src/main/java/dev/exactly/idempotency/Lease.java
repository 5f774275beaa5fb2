package dev.exactly.idempotency;

import java.time.Duration;

/** The running action's hold on its key. */
public interface Lease {

    /** The key being processed. */
    ScopeKey key();

    /** The fencing token of this claim; downstream writes may carry it. */
    OwnerToken owner();

    /** Whether an earlier owner's lease had expired and this execution took over. */
    boolean takeover();

    /**
     * Extends the lease by {@code extension} from now (store time).
     *
     * @return false when the lease was already lost: the action should stop and must not report success
     */
    boolean renew(Duration extension);
}
