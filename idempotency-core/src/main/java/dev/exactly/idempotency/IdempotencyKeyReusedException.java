package dev.exactly.idempotency;

/**
 * The key is already bound to a different request (its fingerprint differs). The existing record is
 * neither replayed nor touched.
 */
public final class IdempotencyKeyReusedException extends IdempotencyException {
    private final Fingerprint stored;
    private final Fingerprint presented;

    public IdempotencyKeyReusedException(Fingerprint stored, Fingerprint presented) {
        super("idempotency_key_reused", "this Idempotency-Key was already used with a different request payload", null);
        this.stored = stored;
        this.presented = presented;
    }

    public Fingerprint stored() {
        return stored;
    }

    public Fingerprint presented() {
        return presented;
    }
}
