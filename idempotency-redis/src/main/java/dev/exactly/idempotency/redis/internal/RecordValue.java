package dev.exactly.idempotency.redis.internal;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;

/**
 * The layout of one record as a single Redis string, and its conversion to an {@link IdempotencyRecord}.
 * One value per scope (not a hash of fields): a replay reads it with one {@code GET} inside the claim
 * script and returns it as one bulk string, and a completion writes it with one {@code SET}.
 *
 * <pre>
 * 1 S : created_ms : lease_ms : expires_ms : retention_ms : owner_len : fingerprint_len : owner fingerprint [finished part]
 * finished part = response_status : headers_len : headers body
 * </pre>
 *
 * <ul>
 *   <li>{@code 1}: the layout version; {@code S}: {@code P} (processing), {@code C} (completed) or
 *       {@code F} (failed);</li>
 *   <li>the numbers are decimal ASCII; times are the server's, epoch milliseconds; {@code lease_ms} is
 *       {@code 0} once finished; {@code retention_ms} is the retention given at claim time;</li>
 *   <li>{@code owner} (the current owner while processing, the last one after) and {@code fingerprint}
 *       ({@link Fingerprint#encoded()}) are UTF-8 bytes of the given lengths, so any text fits;</li>
 *   <li>once finished: the status code, then the {@link HeaderCodec} block of the given length, then the
 *       exact body bytes up to the end of the value.</li>
 * </ul>
 * The scripts read the head with one anchored Lua pattern and never look at the response.
 */
public final class RecordValue {
    private static final byte VERSION = '1';

    private RecordValue() {}

    /** The record a claim created at server time {@code nowMillis}: what the claim script wrote. */
    public static IdempotencyRecord claimed(ScopeKey key, Fingerprint fingerprint, OwnerToken owner, long nowMillis,
            long leaseMillis, long retentionMillis) {
        Instant now = Instant.ofEpochMilli(nowMillis);
        return new IdempotencyRecord(key, RecordStatus.PROCESSING, fingerprint, owner, now,
                now.plusMillis(leaseMillis), now.plusMillis(Math.max(leaseMillis, retentionMillis)), null);
    }

    /**
     * Reads a value the scripts wrote.
     *
     * @throws IllegalArgumentException the bytes are not a record of this layout
     */
    public static IdempotencyRecord decode(ScopeKey key, byte[] value) {
        if (value.length < 2 || value[0] != VERSION) {
            throw new IllegalArgumentException("unknown record layout");
        }
        RecordStatus status = switch (value[1]) {
            case 'P' -> RecordStatus.PROCESSING;
            case 'C' -> RecordStatus.COMPLETED;
            case 'F' -> RecordStatus.FAILED;
            default -> throw new IllegalArgumentException("unknown record status");
        };
        Reader in = new Reader(value);
        in.position = 2;
        in.expect(':');
        long created = in.number();
        long lease = in.number();
        long expires = in.number();
        in.number(); // retention: the scripts' business
        int ownerLength = in.length();
        int fingerprintLength = in.length();
        OwnerToken owner = new OwnerToken(in.text(ownerLength));
        Fingerprint fingerprint = Fingerprint.decode(in.text(fingerprintLength));
        StoredResponse response = null;
        Instant leaseEnd = null;
        if (status == RecordStatus.PROCESSING) {
            leaseEnd = Instant.ofEpochMilli(lease);
        } else {
            int responseStatus = Math.toIntExact(in.number());
            int headersLength = in.length();
            byte[] headers = in.bytes(headersLength);
            response = new StoredResponse(responseStatus, HeaderCodec.decode(headers),
                    Arrays.copyOfRange(value, in.position, value.length));
        }
        return new IdempotencyRecord(key, status, fingerprint, owner, Instant.ofEpochMilli(created), leaseEnd,
                Instant.ofEpochMilli(expires), response);
    }

    /** Whole milliseconds as the decimal ASCII a script reads with {@code tonumber}. */
    public static byte[] decimal(long value) {
        return ascii(Long.toString(value));
    }

    /** ASCII (or UTF-8) bytes of {@code value}. */
    public static byte[] ascii(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static final class Reader {
        private final byte[] value;
        private int position;

        Reader(byte[] value) {
            this.value = value;
        }

        void expect(char c) {
            if (position >= value.length || value[position] != c) {
                throw new IllegalArgumentException("corrupt record at byte " + position);
            }
            position++;
        }

        /** Decimal digits up to the next ':' (consumed). */
        long number() {
            long n = 0;
            int start = position;
            while (position < value.length && value[position] != ':') {
                int digit = value[position] - '0';
                if (digit < 0 || digit > 9 || position - start >= 18) {
                    throw new IllegalArgumentException("corrupt number in record at byte " + position);
                }
                n = n * 10 + digit;
                position++;
            }
            if (position == start) {
                throw new IllegalArgumentException("missing number in record at byte " + position);
            }
            expect(':');
            return n;
        }

        int length() {
            long n = number();
            if (n > value.length - position) {
                throw new IllegalArgumentException("corrupt length in record: " + n);
            }
            return (int) n;
        }

        String text(int length) {
            if (length > value.length - position) {
                throw new IllegalArgumentException("truncated record");
            }
            String text = new String(value, position, length, StandardCharsets.UTF_8);
            position += length;
            return text;
        }

        byte[] bytes(int length) {
            if (length > value.length - position) {
                throw new IllegalArgumentException("truncated record");
            }
            byte[] out = Arrays.copyOfRange(value, position, position + length);
            position += length;
            return out;
        }
    }
}
