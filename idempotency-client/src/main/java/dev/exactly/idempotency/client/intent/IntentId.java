package dev.exactly.idempotency.client.intent;

import java.util.Objects;

/**
 * Names one logical intent of the caller: "pay order 1001", "refund charge ch_42". The same intent id
 * always resumes the same journaled key.
 *
 * @param namespace the caller's namespace (an application or flow, e.g. {@code checkout})
 * @param id        the intent within it (e.g. an order id); 1-1000 characters
 */
public record IntentId(String namespace, String id) {
    /** The longest namespace or id accepted, in characters. */
    public static final int MAX_LENGTH = 1000;

    public IntentId {
        check(namespace, "namespace");
        check(id, "id");
    }

    public static IntentId of(String namespace, String id) {
        return new IntentId(namespace, id);
    }

    private static void check(String value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isEmpty() || value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("an intent's " + what + " is 1-" + MAX_LENGTH + " characters");
        }
        if (value.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("an intent's " + what + " must not contain NUL");
        }
    }

    @Override
    public String toString() {
        return namespace + "/" + id;
    }
}
