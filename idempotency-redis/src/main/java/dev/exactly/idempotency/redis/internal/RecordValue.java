package dev.exactly.idempotency.redis.internal;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The layout of one record as a Redis hash, and its conversion to an {@link IdempotencyRecord}.
 *
 * <table>
 *   <caption>Fields</caption>
 *   <tr><th>field</th><th>value</th></tr>
 *   <tr><td>{@code status}</td><td>{@code PROCESSING}, {@code COMPLETED} or {@code FAILED}</td></tr>
 *   <tr><td>{@code fingerprint}</td><td>{@link Fingerprint#encoded()}</td></tr>
 *   <tr><td>{@code owner}</td><td>the owner token (the current one while processing, the last one after)</td></tr>
 *   <tr><td>{@code created_ms}</td><td>first claim, server time, epoch milliseconds</td></tr>
 *   <tr><td>{@code lease_ms}</td><td>lease end while processing, epoch milliseconds; absent once finished</td></tr>
 *   <tr><td>{@code expires_ms}</td><td>when the key's TTL runs out, epoch milliseconds</td></tr>
 *   <tr><td>{@code retention_ms}</td><td>the retention given at claim time, milliseconds</td></tr>
 *   <tr><td>{@code response_status}</td><td>finished only: the status code</td></tr>
 *   <tr><td>{@code response_headers}</td><td>finished only: {@link HeaderCodec} bytes</td></tr>
 *   <tr><td>{@code response_body}</td><td>finished only: the exact body bytes</td></tr>
 * </table>
 */
public final class RecordHash {
    private RecordHash() {}

    /** Converts the flat field/value list of {@code HGETALL} (as a script returns it). */
    public static IdempotencyRecord fromFlatList(ScopeKey key, List<?> flat) {
        if (flat.size() % 2 != 0) {
            throw new IllegalArgumentException("a hash reply has an even number of elements");
        }
        Map<String, byte[]> fields = new HashMap<>();
        for (int i = 0; i < flat.size(); i += 2) {
            fields.put(text((byte[]) flat.get(i)), (byte[]) flat.get(i + 1));
        }
        return fromFields(key, fields);
    }

    /** Converts the map {@code HGETALL} returns with a byte-array codec (keys compared by content). */
    public static @Nullable IdempotencyRecord fromHash(ScopeKey key, Map<byte[], byte[]> hash) {
        if (hash.isEmpty()) {
            return null;
        }
        Map<String, byte[]> fields = new HashMap<>();
        hash.forEach((name, value) -> fields.put(text(name), value));
        return fromFields(key, fields);
    }

    private static IdempotencyRecord fromFields(ScopeKey key, Map<String, byte[]> fields) {
        RecordStatus status = RecordStatus.valueOf(required(fields, "status"));
        Fingerprint fingerprint = Fingerprint.decode(required(fields, "fingerprint"));
        OwnerToken owner = new OwnerToken(required(fields, "owner"));
        Instant createdAt = millis(required(fields, "created_ms"));
        Instant expiresAt = millis(required(fields, "expires_ms"));
        Instant leaseEnd = null;
        StoredResponse response = null;
        if (status == RecordStatus.PROCESSING) {
            leaseEnd = millis(required(fields, "lease_ms"));
        } else {
            response = new StoredResponse(
                    Integer.parseInt(required(fields, "response_status")),
                    HeaderCodec.decode(requiredBytes(fields, "response_headers")),
                    requiredBytes(fields, "response_body"));
        }
        return new IdempotencyRecord(key, status, fingerprint, owner, createdAt, leaseEnd, expiresAt, response);
    }

    /** Whole milliseconds as the decimal ASCII a script reads with {@code tonumber}. */
    public static byte[] decimal(long value) {
        return ascii(Long.toString(value));
    }

    /** ASCII (or UTF-8) bytes of {@code value}. */
    public static byte[] ascii(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static Instant millis(String value) {
        return Instant.ofEpochMilli(Long.parseLong(value));
    }

    private static String required(Map<String, byte[]> fields, String name) {
        return text(requiredBytes(fields, name));
    }

    private static byte[] requiredBytes(Map<String, byte[]> fields, String name) {
        byte[] value = fields.get(name);
        if (value == null) {
            throw new IllegalArgumentException("record hash lacks field " + name);
        }
        return value;
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
