package dev.exactly.idempotency.redis.internal;

import dev.exactly.idempotency.OwnerToken;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The processing values this process's claims wrote, by owner, from the claim to its completion or
 * release: with the value its claim wrote (or its takeover returned) at hand, a completion sends the
 * finished value whole, written only while the record is still that value ({@code SET ... IFEQ}, or
 * {@code finish-if-equal.lua}; else {@code finish.lua}, by the owner), and the server copies nothing out of
 * the stored one. A completion whose claim is not held here (another process's owner token, a store
 * restarted in between, a full table) goes through {@code complete.lua}, which assembles the same value on
 * the server.
 *
 * <p>Bounded: a caller of the store that claims and never completes or releases leaves an entry behind;
 * when {@link #limit} entries are held the table is emptied, and the claims in flight then complete the
 * other way. Thread-safe.
 */
public final class HeldClaims {
    /** Claims in flight in one process beyond which the table starts over. */
    public static final int DEFAULT_LIMIT = 16_384;

    private record Held(byte[] recordKey, byte[] value) {}

    private final ConcurrentHashMap<OwnerToken, Held> held = new ConcurrentHashMap<>();
    private final int limit;

    public HeldClaims() {
        this(DEFAULT_LIMIT);
    }

    HeldClaims(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive");
        }
        this.limit = limit;
    }

    /** Remembers what {@code owner}'s claim of {@code recordKey} wrote: a processing value of layout 2. */
    public void hold(OwnerToken owner, byte[] recordKey, byte[] value) {
        if (held.size() >= limit) {
            held.clear();
        }
        held.put(owner, new Held(recordKey, value));
    }

    /**
     * Forgets {@code owner}'s claim and returns the value it wrote if that claim was of {@code recordKey};
     * {@code null} otherwise.
     */
    public byte @Nullable [] take(OwnerToken owner, byte[] recordKey) {
        Held claim = held.remove(owner);
        return claim != null && Arrays.equals(claim.recordKey(), recordKey) ? claim.value() : null;
    }

    /** How many claims are held. */
    public int size() {
        return held.size();
    }
}
