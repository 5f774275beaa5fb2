package dev.exactly.idempotency;

/** The {@code Idempotency-Key} value is absent or not a valid key. */
public final class InvalidIdempotencyKeyException extends IdempotencyException {

    /** Why the key was refused. */
    public enum Reason {
        /** No key was sent on a route that requires one. */
        MISSING("idempotency_key_missing"),
        /** The key is empty (also {@code ""}). */
        EMPTY("idempotency_key_invalid"),
        /** The key is longer than {@value IdempotencyKey#MAX_LENGTH} characters. */
        TOO_LONG("idempotency_key_invalid"),
        /** The key holds a character outside printable ASCII, or is a broken quoted string. */
        ILLEGAL_CHARACTER("idempotency_key_invalid"),
        /** The header was sent more than once with different values. */
        AMBIGUOUS("idempotency_key_invalid");

        private final String code;

        Reason(String code) {
            this.code = code;
        }

        public String code() {
            return code;
        }
    }

    private final Reason reason;

    public InvalidIdempotencyKeyException(Reason reason, String message) {
        super(reason.code(), message, null);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
