package dev.exactly.psp.internal;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Pattern;

/** Argument checks shared by the API types and the server. */
public final class Checks {

    private static final Pattern DECLINE_CODE = Pattern.compile("[a-z0-9_]{1,64}");

    private Checks() {}

    /** A decline code: lower-case letters, digits and underscores, 1–64 characters. */
    public static String declineCode(String code) {
        if (!DECLINE_CODE.matcher(code).matches()) {
            throw new IllegalArgumentException("decline code must match [a-z0-9_]{1,64}, was \"" + code + "\"");
        }
        return code;
    }

    /** A probability in [0, 1]. */
    public static double rate(double rate, String what) {
        if (!(rate >= 0.0 && rate <= 1.0)) {
            throw new IllegalArgumentException(what + " must be in [0, 1], was " + rate);
        }
        return rate;
    }

    /** An idempotency key: 1–255 printable ASCII characters, no leading or trailing space. */
    public static boolean validKey(String key) {
        return !key.isEmpty()
                && key.length() <= 255
                && printable(key)
                && key.strip().equals(key);
    }

    /** Only characters 0x20–0x7E. */
    public static boolean printable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    /**
     * Request metadata: up to 50 pairs, keys 1–40 characters, values at most 500; returns an
     * unmodifiable copy sorted by key.
     */
    public static Map<String, String> metadata(Map<String, String> metadata) {
        if (metadata.size() > 50) {
            throw new IllegalArgumentException("metadata may hold at most 50 keys");
        }
        metadata.forEach((k, v) -> {
            Objects.requireNonNull(k, "metadata key");
            Objects.requireNonNull(v, "metadata value");
            if (k.isEmpty() || k.length() > 40) {
                throw new IllegalArgumentException("metadata keys must be 1-40 characters");
            }
            if (v.length() > 500) {
                throw new IllegalArgumentException("metadata values must be at most 500 characters");
            }
        });
        return Collections.unmodifiableMap(new TreeMap<>(metadata));
    }
}
