package dev.exactly.psp.internal;

import dev.exactly.psp.ChargeStatus;
import java.time.Instant;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Every charge's changing state, by charge number (the order the book opened them in), in arrays of
 * primitives: the handle of its unchanging part, the expiry of its hold, its status and what was captured
 * and refunded. No object per charge. Not thread-safe (the book's lock guards it). A status is kept as its ordinal
 * in a byte: the table lives and dies with the process, so no stored ordinal outlives a change of the enum.
 */
@SuppressWarnings("EnumOrdinal")
final class ChargeTable {
    private static final ChargeStatus[] STATUSES = ChargeStatus.values();
    private static final int INITIAL = 1024;
    /** Marks a charge without an expiry (in {@link #expirySeconds}). */
    private static final long NO_EXPIRY = Long.MIN_VALUE;

    private long[] frozen;
    private long[] expirySeconds;
    private int[] expiryNanos;
    private byte[] statuses;
    private long[] captured;
    private long[] refunded;
    private int size;

    ChargeTable() {
        clear();
    }

    /** Adds a charge; returns its number. */
    int add(long frozenHandle, @Nullable Instant expiresAt, ChargeStatus status, long capturedAmount) {
        if (size == frozen.length) {
            int capacity = frozen.length * 2;
            frozen = Arrays.copyOf(frozen, capacity);
            expirySeconds = Arrays.copyOf(expirySeconds, capacity);
            expiryNanos = Arrays.copyOf(expiryNanos, capacity);
            statuses = Arrays.copyOf(statuses, capacity);
            captured = Arrays.copyOf(captured, capacity);
            refunded = Arrays.copyOf(refunded, capacity);
        }
        int n = size++;
        frozen[n] = frozenHandle;
        expirySeconds[n] = expiresAt == null ? NO_EXPIRY : expiresAt.getEpochSecond();
        expiryNanos[n] = expiresAt == null ? 0 : expiresAt.getNano();
        statuses[n] = (byte) status.ordinal();
        captured[n] = capturedAmount;
        refunded[n] = 0;
        return n;
    }

    int size() {
        return size;
    }

    long frozen(int n) {
        return frozen[check(n)];
    }

    ChargeStatus status(int n) {
        return STATUSES[statuses[check(n)]];
    }

    void status(int n, ChargeStatus status) {
        statuses[check(n)] = (byte) status.ordinal();
    }

    long captured(int n) {
        return captured[check(n)];
    }

    void captured(int n, long amount) {
        captured[check(n)] = amount;
    }

    long refunded(int n) {
        return refunded[check(n)];
    }

    void refunded(int n, long amount) {
        refunded[check(n)] = amount;
    }

    /** An uncaptured hold past its expiry becomes expired. */
    void expireIfDue(int n, Instant now) {
        check(n);
        if (statuses[n] == ChargeStatus.AUTHORIZED.ordinal()
                && expirySeconds[n] != NO_EXPIRY
                && (now.getEpochSecond() > expirySeconds[n]
                        || (now.getEpochSecond() == expirySeconds[n] && now.getNano() >= expiryNanos[n]))) {
            statuses[n] = (byte) ChargeStatus.EXPIRED.ordinal();
        }
    }

    void clear() {
        frozen = new long[INITIAL];
        expirySeconds = new long[INITIAL];
        expiryNanos = new int[INITIAL];
        statuses = new byte[INITIAL];
        captured = new long[INITIAL];
        refunded = new long[INITIAL];
        size = 0;
    }

    private int check(int n) {
        if (n < 0 || n >= size) {
            throw new IndexOutOfBoundsException("no charge " + n + " (" + size + " charges)");
        }
        return n;
    }
}
