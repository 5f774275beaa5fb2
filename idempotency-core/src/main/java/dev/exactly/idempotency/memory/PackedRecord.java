package dev.exactly.idempotency.memory;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * A finished record as the in-memory store keeps it until it expires: its response as it was given (immutable,
 * so every replay writes the same bytes, uncopied), its times in fields, and its owner and fingerprint in one
 * byte array, decoded on each read. A store holds its finished records for their whole retention, so each
 * survives young collections and is copied by them. Kept as an {@link IdempotencyRecord} (with its fingerprint,
 * owner, their strings and two instants), a finished record with a one-header response took 21 objects and
 * 763 bytes with its key and its slot in the map; packed, 12 and 586. A replay decodes three short strings and
 * builds the record anew.
 *
 * <p>The array: the owner, the fingerprint's algorithm and its value, each as a big-endian {@code int} length
 * and that many bytes of UTF-8.
 */
final class PackedRecord implements InMemoryIdempotencyStore.Entry {
    private final boolean completed;
    private final long createdSeconds;
    private final int createdNanos;
    private final long expiresSeconds;
    private final int expiresNanos;
    private final byte[] packed;
    private final StoredResponse response;

    private PackedRecord(
            boolean completed, Instant createdAt, Instant expiresAt, byte[] packed, StoredResponse response) {
        this.completed = completed;
        this.createdSeconds = createdAt.getEpochSecond();
        this.createdNanos = createdAt.getNano();
        this.expiresSeconds = expiresAt.getEpochSecond();
        this.expiresNanos = expiresAt.getNano();
        this.packed = packed;
        this.response = response;
    }

    /** Packs a finished record. */
    static PackedRecord of(IdempotencyRecord record) {
        StoredResponse response = record.response();
        OwnerToken owner = record.owner();
        if (!record.status().isFinished() || response == null || owner == null) {
            throw new IllegalArgumentException("only a finished record with its owner is packed");
        }
        byte[] ownerBytes = utf8(owner.value());
        byte[] algorithm = utf8(record.fingerprint().algorithm());
        byte[] value = utf8(record.fingerprint().value());
        byte[] packed = new byte[12 + ownerBytes.length + algorithm.length + value.length];
        int at = put(packed, 0, ownerBytes);
        at = put(packed, at, algorithm);
        put(packed, at, value);
        return new PackedRecord(
                record.status() == RecordStatus.COMPLETED, record.createdAt(), record.expiresAt(), packed, response);
    }

    /** Whether the record has expired at {@code now} (it expires at its expiry, inclusive). */
    @Override
    public boolean expired(Instant now) {
        long seconds = now.getEpochSecond();
        return seconds > expiresSeconds || (seconds == expiresSeconds && now.getNano() >= expiresNanos);
    }

    /** The expiry in epoch milliseconds, {@link Long#MAX_VALUE} past what a long of milliseconds holds. */
    @Override
    public long expiresAtMillis() {
        try {
            return Math.addExact(Math.multiplyExact(expiresSeconds, 1000L), expiresNanos / 1_000_000);
        } catch (ArithmeticException beyondMillis) {
            return Long.MAX_VALUE;
        }
    }

    /** The record of {@code key}, decoded anew around the kept response. */
    IdempotencyRecord record(ScopeKey key) {
        int[] at = {0};
        OwnerToken owner = new OwnerToken(string(at));
        Fingerprint fingerprint = new Fingerprint(string(at), string(at));
        return new IdempotencyRecord(
                key,
                completed ? RecordStatus.COMPLETED : RecordStatus.FAILED,
                fingerprint,
                owner,
                Instant.ofEpochSecond(createdSeconds, createdNanos),
                null,
                Instant.ofEpochSecond(expiresSeconds, expiresNanos),
                response);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Writes {@code bytes} at {@code at}, after their length; returns the position after them. */
    private static int put(byte[] out, int at, byte[] bytes) {
        int length = bytes.length;
        out[at] = (byte) (length >>> 24);
        out[at + 1] = (byte) (length >>> 16);
        out[at + 2] = (byte) (length >>> 8);
        out[at + 3] = (byte) length;
        System.arraycopy(bytes, 0, out, at + 4, length);
        return at + 4 + length;
    }

    /** Reads the string at {@code at[0]} and moves past it. */
    private String string(int[] at) {
        int p = at[0];
        int length = ((packed[p] & 0xff) << 24)
                | ((packed[p + 1] & 0xff) << 16)
                | ((packed[p + 2] & 0xff) << 8)
                | (packed[p + 3] & 0xff);
        at[0] = p + 4 + length;
        return new String(packed, p + 4, length, StandardCharsets.UTF_8);
    }

    /** The bytes packed beside the fields (a test's measure of what a record keeps). */
    int packedLength() {
        return packed.length;
    }
}
