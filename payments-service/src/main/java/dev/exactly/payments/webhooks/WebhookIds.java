package dev.exactly.payments.webhooks;

import dev.exactly.payments.ids.RandomIds;

/** Unguessable ids and secrets of the webhooks: a prefix and base-62 characters. */
final class WebhookIds {
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
        return RandomIds.next(prefix, length);
    }
}
