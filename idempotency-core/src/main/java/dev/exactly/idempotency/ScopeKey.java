package dev.exactly.idempotency;

/**
 * The hashed scope a store indexes records by: 64 lower-case hex digits of SHA-256 over tenant, method,
 * route and key (see {@link Scope#toScopeKey()}).
 *
 * @param hash the hex digest
 */
public record ScopeKey(String hash) {
    public ScopeKey {
        if (!isHex64(hash)) {
            throw new IllegalArgumentException("a scope key is 64 lower-case hex digits");
        }
    }

    /** {@code [0-9a-f]{64}}, checked without a regular expression (every request builds a key). */
    private static boolean isHex64(String hash) {
        if (hash.length() != 64) {
            return false;
        }
        for (int i = 0; i < 64; i++) {
            char c = hash.charAt(i);
            if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) {
                return false;
            }
        }
        return true;
    }

    /**
     * The key wrapped as a Redis Cluster hash tag ({@code {hash}}): every Redis key built around it
     * lands in the same slot, so a script may touch all of one scope's data atomically.
     */
    public String hashTag() {
        return "{" + hash + "}";
    }

    @Override
    public String toString() {
        return hash;
    }
}
