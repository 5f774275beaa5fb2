package dev.exactly.idempotency;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The fencing token of one claim. Every write after the claim ({@code complete}, {@code release},
 * {@code renew}) names it, and a store applies the write only if the record is still owned by it.
 *
 * @param value 32 hex digits of randomness
 */
public record OwnerToken(String value) {
    private static final SecureRandom RANDOM = new SecureRandom();

    public OwnerToken {
        if (value.isEmpty() || value.length() > 64) {
            throw new IllegalArgumentException("an owner token is 1-64 characters");
        }
    }

    /** A fresh unguessable token. */
    public static OwnerToken random() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return new OwnerToken(HexFormat.of().formatHex(bytes));
    }

    @Override
    public String toString() {
        return value;
    }
}
