package dev.exactly.payments.webhooks;

import java.security.SecureRandom;

/** Unguessable ids and secrets of the webhooks: a prefix and base-62 characters. */
final class WebhookIds {
    private static final char[] ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    /** Random bytes drawn at a time: 24 characters take about 24.8 bytes. */
    private static final int DRAW = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private WebhookIds() {}

    /** A new event id ({@code evt_…}). */
    static String event() {
        return next("evt_", 24);
    }

    /** A new endpoint id ({@code we_…}). */
    static String endpoint() {
        return next("we_", 24);
    }

    /** A new signing secret ({@code whsec_…}, 32 base-62 characters: about 190 bits). */
    static String secret() {
        return next("whsec_", 32);
    }

    /** A new claim token of the delivery worker. */
    static String claim() {
        return next("", 24);
    }

    private static String next(String prefix, int length) {
        return next(RANDOM, prefix, length);
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
