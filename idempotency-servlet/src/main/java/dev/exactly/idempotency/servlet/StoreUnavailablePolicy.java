package dev.exactly.idempotency.servlet;

/**
 * What a guarded route does when the idempotency store fails before the handler was called (a claim or a
 * wait that timed out, a refused connection). Whatever the policy, a store that fails while the handler
 * runs is {@code outcome-unknown}, and one that fails after it returned gives the handler's own answer.
 */
public enum StoreUnavailablePolicy {
    /**
     * 503 {@code idempotency-store-unavailable} with {@code Retry-After}; the handler is not called (fail
     * closed). The default: the guard is all that keeps a retry from running the handler again.
     */
    REFUSE,
    /**
     * The handler is called without the guard: no claim, nothing recorded, no replay, and the request
     * attribute {@code UNGUARDED} of the filter set; then, for the store-unavailable {@code Retry-After}
     * (2 s by default), requests on guarded routes pass without trying the store, so that a stalled store
     * does not hold each of them for its timeout. Only for handlers that guard their effects durably
     * themselves (a unique key in the transaction that writes them, as a durable tier does): with any other
     * handler, a retry or a concurrent duplicate sent while the store is down runs again.
     */
    PASS_THROUGH
}
