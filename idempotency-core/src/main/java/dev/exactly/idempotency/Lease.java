package dev.exactly.idempotency;

import java.time.Duration;

/**
 * The running action's hold on its key. Under a policy with {@link KeepAlive} on (the default) the
 * engine renews it by itself while the action runs; the action renews it only to ask for more than the
 * policy's lease at once.
 */
public interface Lease {

    /** The key being processed. */
    ScopeKey key();

    /** The fencing token of this claim; downstream writes may carry it. */
    OwnerToken owner();

    /** Whether an earlier owner's lease had expired and this execution took over. */
    boolean takeover();

    /**
     * Extends the lease to {@code extension} from now (store time).
     *
     * @return false when the lease was already lost: the action should stop and must not report success
     * @throws StoreUnavailableException the store did not answer
     */
    boolean renew(Duration extension);

    /**
     * Whether this owner can no longer count on holding its key: the store refused a renewal (another
     * request took the key over), or the lease ran past its end without a renewal the store confirmed
     * (the store did not answer, the keep-alive is off or reached its max hold, the process was frozen),
     * so another request may take the key over at any moment. Once true it stays true. An action that
     * sees it should stop before its next side effect; either way its outcome is only recorded if the
     * store still knows it as the owner (every final write is fenced by the owner token).
     */
    boolean isLost();
}
