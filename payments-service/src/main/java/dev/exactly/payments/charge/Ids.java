package dev.exactly.payments.charge;

import dev.exactly.payments.ids.RandomIds;

/** Unguessable resource ids: a type prefix and 24 base-62 characters ({@code ch_…}, {@code re_…}). */
public final class Ids {
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

    private static String next(String prefix) {
        return RandomIds.next(prefix, 24);
    }
}
