package dev.exactly.payments.ids;

import java.security.SecureRandom;

/** Unguessable ids and secrets: a prefix and base-62 characters from the platform's strong generator. */
public final class RandomIds {
    private static final char[] ALPHABET =
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    /** Random bytes drawn at a time: 24 characters take about 24.8 bytes. */
    private static final int DRAW = 32;

    private static final SecureRandom RANDOM = new SecureRandom();

    private RandomIds() {}

    /**
     * {@code prefix} and {@code length} base-62 characters, from random bytes drawn {@value #DRAW} at a time
     * (one call to the generator for an id of 24 characters, almost always): each byte's low six bits give a
     * character when they are below 62 (uniform over the alphabet), else the byte is skipped.
     */
    public static String next(String prefix, int length) {
        char[] out = new char[prefix.length() + length];
        prefix.getChars(0, prefix.length(), out, 0);
        int n = prefix.length();
        byte[] bytes = new byte[DRAW];
        while (n < out.length) {
            RANDOM.nextBytes(bytes);
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
