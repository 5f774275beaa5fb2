package dev.exactly.payments.charge;

import java.security.SecureRandom;

/** Unguessable resource ids: a type prefix and 24 base-62 characters ({@code ch_…}, {@code re_…}). */
public final class Ids {
    private static final char[] ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    private final SecureRandom random = new SecureRandom();

    /** A new charge id. */
    public String charge() {
        return next("ch_");
    }

    /** A new capture or void id. */
    public String action() {
        return next("ca_");
    }

    /** A new refund id. */
    public String refund() {
        return next("re_");
    }

    private String next(String prefix) {
        StringBuilder out = new StringBuilder(prefix);
        for (int i = 0; i < 24; i++) {
            out.append(ALPHABET[random.nextInt(ALPHABET.length)]);
        }
        return out.toString();
    }
}
