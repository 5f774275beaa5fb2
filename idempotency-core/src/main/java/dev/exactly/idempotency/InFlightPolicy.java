package dev.exactly.idempotency;

import java.time.Duration;

/** What a request does when it finds its key still processing under another owner. */
public sealed interface InFlightPolicy {

    /** Answer at once with a conflict carrying {@code retryAfter}. */
    static InFlightPolicy reject(Duration retryAfter) {
        return new Reject(retryAfter);
    }

    /** Wait (woken by the store's push) up to {@code maxWait} for the other request, then replay. */
    static InFlightPolicy waitUpTo(Duration maxWait) {
        return new Wait(maxWait);
    }

    /**
     * Answer at once that the request is in flight.
     *
     * @param retryAfter hint sent to the client; at least one second
     */
    record Reject(Duration retryAfter) implements InFlightPolicy {
        public Reject {
            if (retryAfter.isNegative()) {
                throw new IllegalArgumentException("retryAfter must not be negative");
            }
            if (retryAfter.compareTo(Duration.ofSeconds(1)) < 0) {
                retryAfter = Duration.ofSeconds(1);
            }
        }
    }

    /**
     * Wait for the request in flight to finish, then replay its outcome.
     *
     * @param maxWait the bound on the wait; at most {@link IdempotencyPolicy#MAX_WAIT}
     */
    record Wait(Duration maxWait) implements InFlightPolicy {
        public Wait {
            if (maxWait.isNegative() || maxWait.isZero() || maxWait.compareTo(IdempotencyPolicy.MAX_WAIT) > 0) {
                throw new IllegalArgumentException("maxWait must be in (0, " + IdempotencyPolicy.MAX_WAIT + "]");
            }
        }
    }
}
