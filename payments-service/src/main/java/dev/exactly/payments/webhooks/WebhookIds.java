package dev.exactly.payments.webhooks;

import java.security.SecureRandom;

/** Unguessable ids and secrets of the webhooks: a prefix and base-62 characters. */
final class WebhookIds {
    private static final char[] ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
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
        StringBuilder out = new StringBuilder(prefix);
        for (int i = 0; i < length; i++) {
            out.append(ALPHABET[RANDOM.nextInt(ALPHABET.length)]);
        }
        return out.toString();
    }
}
