package dev.exactly.payments.charge;

import java.security.SecureRandom;

/** Unguessable resource ids: a type prefix and 24 base-62 characters ({@code ch_…}, {@code re_…}). */
public final class Ids {
    private static final char[] ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    /** Random bytes drawn at a time: 24 characters take about 24.8 bytes. */
    private static final int DRAW = 32;

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
        return next(random, prefix, 24);
    }

    /**
     * {@code prefix} and {@code length} base-62 characters, from random bytes drawn {@value #DRAW} at a time
     * (one call to the generator for an id, almost always): each byte's low six bits give a character when
     * they are below 62 (uniform over the alphabet), else the byte is skipped.
     */
    private static String next(SecureRandom random, String prefix, int length) {
        char[] out = new char[prefix.length() + length];
        prefix.getChars(0, prefix.length(), out, 0);
        int n = prefix.length();
        byte[] bytes = new byte[DRAW];
        while (n < out.length) {
            random.nextBytes(bytes);
            for (int i = 0; i < bytes.length && n < out.length; i++) {
                int six = bytes[i] & 0x3F;
                if (six < ALPHABET.length) {
                    out[n++] = ALPHABET[six];
                }
            }
        }
        return new String(out);
    }
}
