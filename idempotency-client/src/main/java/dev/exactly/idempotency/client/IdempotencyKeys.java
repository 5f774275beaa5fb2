package dev.exactly.idempotency.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;
import java.util.UUID;

/**
 * Idempotency keys, one per logical intent, never one per attempt.
 *
 * <p><b>Derived keys</b> ({@link #derive}) are computed from what identifies the intent, so that every
 * process that computes the same intent gets the same key, with nothing stored. The key is the lower-case
 * hex SHA-256 (64 characters) of the UTF-8 bytes of
 * <pre>  "exactly-idempotency-key/v1" NUL namespace NUL part₁ NUL part₂ ... NUL partₙ</pre>
 * where NUL is the byte {@code 0x00}. No component may contain NUL (so the encoding is unambiguous) and
 * the namespace and each part must be non-empty. Example: {@code derive("checkout", "user-42", "order-1001")}
 * is the SHA-256 of the bytes {@code exactly-idempotency-key/v1 \0 checkout \0 user-42 \0 order-1001}
 * (without the spaces). Put into the parts everything that makes the intent this intent (user, cart or order id,
 * amount): a different amount must be a different intent.
 *
 * <p><b>Minted keys</b> ({@link #mint}) are random (UUID v4); they survive a crash only if they are
 * written down before the first byte is sent, which {@code IntentClient} does with a
 * {@code KeyJournal}.
 */
public final class IdempotencyKeys {
    /** The request header that carries the key. */
    public static final String HEADER = "Idempotency-Key";
    /** The longest key servers accept (Stripe, this project): 255 characters. */
    public static final int MAX_LENGTH = 255;
    /** The first component hashed by {@link #derive}: names the scheme and its version. */
    public static final String DERIVATION_DOMAIN = "exactly-idempotency-key/v1";

    private IdempotencyKeys() {}

    /**
     * The key of an intent, derived: the same inputs give the same key in every process.
     *
     * @param namespace the caller's namespace (an application or flow name, e.g. {@code checkout})
     * @param parts     what identifies the intent within it (e.g. user id, order id, amount); at least one
     */
    public static String derive(String namespace, String... parts) {
        Objects.requireNonNull(parts, "parts");
        if (parts.length == 0) {
            throw new IllegalArgumentException("derive needs at least one part that identifies the intent");
        }
        MessageDigest sha256 = sha256();
        sha256.update(DERIVATION_DOMAIN.getBytes(StandardCharsets.UTF_8));
        component(sha256, "namespace", namespace);
        for (String part : parts) {
            component(sha256, "part", part);
        }
        return HexFormat.of().formatHex(sha256.digest());
    }

    /** A random key (UUID v4, from a cryptographically strong generator). */
    public static String mint() {
        return UUID.randomUUID().toString();
    }

    /** Whether {@code key} is a valid key: 1 to 255 printable ASCII characters (space allowed inside). */
    public static boolean isValid(String key) {
        if (key.isEmpty() || key.length() > MAX_LENGTH || key.charAt(0) == ' ' || key.charAt(key.length() - 1) == ' ') {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    /** {@code key}, checked: a valid key or an {@link IllegalArgumentException}. */
    public static String requireValid(String key) {
        Objects.requireNonNull(key, "key");
        if (!isValid(key)) {
            throw new IllegalArgumentException("an idempotency key is 1-" + MAX_LENGTH
                    + " printable ASCII characters without leading or trailing spaces");
        }
        return key;
    }

    private static void component(MessageDigest sha256, String what, String value) {
        Objects.requireNonNull(value, what);
        if (value.isEmpty()) {
            throw new IllegalArgumentException("the " + what + " of a derived key must not be empty");
        }
        if (value.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("the " + what + " of a derived key must not contain NUL");
        }
        sha256.update((byte) 0);
        sha256.update(value.getBytes(StandardCharsets.UTF_8));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
