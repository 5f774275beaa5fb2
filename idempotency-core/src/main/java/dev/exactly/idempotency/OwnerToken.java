package dev.exactly.idempotency;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The fencing token of one claim. Every write after the claim ({@code complete}, {@code release},
 * {@code renew}) names it, and a store applies the write only if the record is still owned by it.
 *
 * @param value 32 hex digits of randomness
 */
public record OwnerToken(String value) {
    /**
     * Generators of unguessable tokens, picked per thread: the platform default takes a process-wide lock
     * and reads the kernel's pool on every call, which every claim would queue on.
     */
    private static final SecureRandom[] RANDOMS = randoms(8);

    public OwnerToken {
        if (value.isEmpty() || value.length() > 64) {
            throw new IllegalArgumentException("an owner token is 1-64 characters");
        }
    }

    /** A fresh unguessable token. */
    public static OwnerToken random() {
        byte[] bytes = new byte[16];
        RANDOMS[(int) (Thread.currentThread().threadId() & (RANDOMS.length - 1))].nextBytes(bytes);
        return new OwnerToken(HexFormat.of().formatHex(bytes));
    }

    /** SHA1PRNG instances, each seeded from the platform's entropy source. */
    private static SecureRandom[] randoms(int count) {
        SecureRandom seeds = new SecureRandom();
        SecureRandom[] randoms = new SecureRandom[count];
        for (int i = 0; i < count; i++) {
            try {
                randoms[i] = SecureRandom.getInstance("SHA1PRNG");
                byte[] seed = new byte[32];
                seeds.nextBytes(seed);
                randoms[i].setSeed(seed);
            } catch (NoSuchAlgorithmException absent) {
                randoms[i] = seeds;
            }
        }
        return randoms;
    }

    @Override
    public String toString() {
        return value;
    }
}
