package dev.exactly.idempotency;

import java.util.regex.Pattern;

/**
 * The hashed scope a store indexes records by: 64 lower-case hex digits of SHA-256 over tenant, method,
 * route and key (see {@link Scope#toScopeKey()}).
 *
 * @param hash the hex digest
 */
public record ScopeKey(String hash) {
    private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");

    public ScopeKey {
        if (!HEX64.matcher(hash).matches()) {
            throw new IllegalArgumentException("a scope key is 64 lower-case hex digits");
        }
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
