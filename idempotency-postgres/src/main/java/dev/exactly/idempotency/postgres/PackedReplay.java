package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Reads the column {@code replay} that the row trigger of migration V12 ({@code db/idempotency/V12__replay_packed.sql})
 * keeps for every finished record: the record's fields but its body, packed so that a replay reads two columns
 * instead of nine. The layout, all integers big-endian: a version byte (1); {@code created_at} and {@code
 * expires_at} as PostgreSQL's binary timestamps (microseconds since 2000-01-01 00:00 UTC); {@code
 * response_status}; then a one-dimensional {@code text[]} in PostgreSQL's binary array form (dimensions, a null
 * flag, the element type, the length and lower bound, then each element as its length, -1 for null, and its
 * UTF-8 bytes) holding status, fingerprint and owner token, then the headers as {@code response_headers} keeps
 * them, name and value in turn.
 */
final class PackedReplay {
    private static final byte VERSION = 1;
    /** PostgreSQL's type id of {@code text}. */
    private static final int TEXT = 25;
    /** The elements of the array before the headers: status, fingerprint, owner token. */
    private static final int FIELDS = 3;

    private PackedReplay() {}

    /**
     * The finished record that {@code replay} and {@code body} hold, or null when there is none to read from
     * them: no column (a record in flight, one finished before V12, or by a session whose client encoding is
     * not UTF8), a version this store does not know, a time at infinity, or bytes that are not in the layout
     * their version byte names (which the trigger never writes: it rewrites any value written by hand). The
     * store then reads the record's columns, which stay the record: the packed column only saves the read.
     */
    static @Nullable IdempotencyRecord record(ScopeKey key, byte @Nullable [] replay, byte @Nullable [] body) {
        if (replay == null || body == null || replay.length == 0 || replay[0] != VERSION) {
            return null;
        }
        try {
            ByteBuffer in = ByteBuffer.wrap(replay, 1, replay.length - 1);
            Instant created = Timestamps.ofMicros(in.getLong());
            Instant expires = Timestamps.ofMicros(in.getLong());
            int responseStatus = in.getInt();
            int dimensions = in.getInt();
            in.getInt(); // whether an element is null
            int elementType = in.getInt();
            int count = in.getInt();
            in.getInt(); // the lower bound
            if (dimensions != 1 || elementType != TEXT || count < FIELDS || (count - FIELDS) % 2 != 0) {
                throw new IllegalArgumentException("not a one-dimensional text[] of three fields and header pairs");
            }
            RecordStatus status = finishedStatus(required(text(in), "status"));
            Fingerprint fingerprint = Fingerprint.decode(required(text(in), "fingerprint"));
            String owner = text(in);
            String[] headers = new String[count - FIELDS];
            for (int i = 0; i < headers.length; i++) {
                headers[i] = required(text(in), "header");
            }
            if (in.hasRemaining()) {
                throw new IllegalArgumentException("bytes after the array");
            }
            if (created == null || expires == null) {
                return null;
            }
            return new IdempotencyRecord(
                    key,
                    status,
                    fingerprint,
                    owner == null ? null : new OwnerToken(owner),
                    created,
                    null,
                    expires,
                    StoredResponse.ofHeaderPairs(responseStatus, headers, body));
        } catch (BufferUnderflowException | IllegalArgumentException malformed) {
            return null;
        }
    }

    /** The status of a finished record by its name (a switch: no lookup of the enum's names by hash). */
    private static RecordStatus finishedStatus(String name) {
        return switch (name) {
            case "COMPLETED" -> RecordStatus.COMPLETED;
            case "FAILED" -> RecordStatus.FAILED;
            default -> throw new IllegalArgumentException("not a finished status: " + name);
        };
    }

    private static @Nullable String text(ByteBuffer in) {
        int length = in.getInt();
        if (length < 0) {
            return null;
        }
        if (length > in.remaining()) {
            throw new BufferUnderflowException();
        }
        String text = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return text;
    }

    private static String required(@Nullable String text, String what) {
        if (text == null) {
            throw new IllegalArgumentException("a null " + what);
        }
        return text;
    }
}
