package dev.exactly.idempotency.postgres;

import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGResultSetMetaData;

/**
 * Reads a {@code timestamptz} column as an {@link Instant} on the hot path of a claim. PostgreSQL JDBC builds a
 * {@code TimestampUtils} for every result set on its first date or time value, with calendars and time zone
 * caches, before it decodes even a binary timestamp: in flight recordings of the HTTP benchmark that was most
 * of what decoding a claim's row cost the serving JVM. A value the server sent in binary (the driver asks for
 * binary results once a statement is prepared on the server) is the count of microseconds since 2000-01-01
 * 00:00 UTC, eight bytes, big-endian, which this class converts itself; anything else (a value sent as text,
 * before that, or {@code ±infinity}) goes through the driver's {@code OffsetDateTime}, as before.
 */
final class Timestamps {
    /** 2000-01-01T00:00:00Z, PostgreSQL's epoch, in seconds since the Unix epoch. */
    private static final long POSTGRES_EPOCH_SECONDS = 946_684_800L;

    private static final int BINARY = 1;

    private Timestamps() {}

    /** The column's value, or null for SQL NULL. */
    static @Nullable Instant instant(ResultSet row, int column) throws SQLException {
        byte[] raw = row.getBytes(column);
        if (raw == null) {
            return null;
        }
        if (raw.length == Long.BYTES && binary(row, column)) {
            Instant finite = ofMicros(bigEndianLong(raw, 0));
            if (finite != null) {
                return finite;
            }
        }
        OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    private static boolean binary(ResultSet row, int column) throws SQLException {
        ResultSetMetaData meta = row.getMetaData();
        return meta.isWrapperFor(PGResultSetMetaData.class)
                && meta.unwrap(PGResultSetMetaData.class).getFormat(column) == BINARY;
    }

    /**
     * A timestamp in PostgreSQL's binary form (microseconds since 2000-01-01 00:00 UTC), or null for
     * {@code ±infinity}.
     */
    static @Nullable Instant ofMicros(long micros) {
        if (micros == Long.MAX_VALUE || micros == Long.MIN_VALUE) {
            return null;
        }
        return Instant.ofEpochSecond(
                POSTGRES_EPOCH_SECONDS + Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }

    /** The eight bytes of {@code b} from {@code offset}, big-endian. */
    static long bigEndianLong(byte[] b, int offset) {
        long v = 0;
        for (int i = offset; i < offset + Long.BYTES; i++) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }
}
