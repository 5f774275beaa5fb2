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
import java.util.List;
import java.util.Map;

/**
 * The layout of one record as a single Redis string, and its conversion to an {@link IdempotencyRecord}.
 * One value per scope (not a hash of fields): a claim writes it with one {@code SET ... NX GET} (which
 * returns the record already there, so a replay is that one command), and a completion rewrites it
 * with one {@code SET}.
 *
 * <h2>Layout 2 (written by this version)</h2>
 * <pre>
 * 2 S a b c retention owner_len : owner fingerprint_len : fingerprint created : [finished part]
 * finished part = response_status : headers_len : headers body
 * </pre>
 * <ul>
 *   <li>{@code 2}: the layout version; {@code S}: {@code P} (processing), {@code C} (completed) or
 *       {@code F} (failed);</li>
 *   <li>{@code a}, {@code b}, {@code c} and {@code retention}: exactly {@value #WIDTH} decimal digits each
 *       (zero-padded), so that the owner starts at a fixed offset ({@value #OWNER_OFFSET}) and a script
 *       fences an owner by comparing one substring, without parsing;</li>
 *   <li>processing: {@code a} is the lease end and {@code b} the expiry (epoch milliseconds, the Redis
 *       server's clock as the writing client estimates it, see {@code ServerClock}), and {@code c} the
 *       <em>lease mark</em>: the lease is over once the key's {@code PTTL} is at or below {@code c}. The
 *       mark is what the takeover script decides on: it is relative to the key's own TTL, counted by the
 *       server, so no client clock takes part in the decision;</li>
 *   <li>finished: {@code a} is when it finished (estimated server time), {@code b} and {@code c} are
 *       zero, and the record expires at {@code a + retention} (the TTL the completion set);</li>
 *   <li>{@code retention}: the retention given at claim time, milliseconds;</li>
 *   <li>{@code owner} (the current owner while processing, the last one after) and {@code fingerprint}
 *       ({@link Fingerprint#encoded()}) are UTF-8 bytes of the given decimal lengths, so any text fits;
 *       {@code created} is decimal epoch milliseconds;</li>
 *   <li>once finished: the status code, then the {@link HeaderCodec} block of the given length, then the
 *       exact body bytes up to the end of the value.</li>
 * </ul>
 *
 * <h2>Layout 1 (earlier versions; still read)</h2>
 * <pre>
 * 1 S : created_ms : lease_ms : expires_ms : retention_ms : owner_len : fingerprint_len : owner fingerprint [finished part]
 * </pre>
 * Times from the server's {@code TIME}. A finished layout-1 record replays; a processing one is taken
 * over (in layout 2) by the claim script once its lease has ended by the server's clock.
 */
public final class RecordValue {
    /** Digits of each fixed-width number at the front of a layout-2 value. */
    public static final int WIDTH = 13;
    /** Where the owner's length starts in a layout-2 value (0-based; 55 in Lua's 1-based counting). */
    public static final int OWNER_OFFSET = 2 + 4 * WIDTH;
    /** The largest number a fixed-width field holds (epoch milliseconds up to the year 2286). */
    public static final long MAX_FIXED = 9_999_999_999_999L;

    private static final byte LEGACY_VERSION = '1';
    private static final byte VERSION = '2';

    private RecordValue() {}

    /** The record a claim at (estimated) server time {@code nowMillis} creates: what {@link #processing} encodes. */
    public static IdempotencyRecord claimed(
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            long nowMillis,
            long leaseMillis,
            long retentionMillis) {
        Instant now = Instant.ofEpochMilli(nowMillis);
        return new IdempotencyRecord(
                key,
                RecordStatus.PROCESSING,
                fingerprint,
                owner,
                now,
                now.plusMillis(leaseMillis),
                now.plusMillis(Math.max(leaseMillis, retentionMillis)),
                null);
    }

    /**
     * The layout-2 value of a new claim at {@code nowMillis}: lease end {@code now + lease}, expiry
     * {@code now + max(lease, retention)}, to be written with a TTL of {@code max(lease, retention)}, and a
     * lease mark of {@code max(lease, retention) - lease}.
     */
    public static byte[] processing(
            OwnerToken owner, Fingerprint fingerprint, long nowMillis, long leaseMillis, long retentionMillis) {
        long ttl = Math.max(leaseMillis, retentionMillis);
        byte[] ownerBytes = ascii(owner.value());
        byte[] algorithm = ascii(fingerprint.algorithm());
        byte[] fingerprintValue = ascii(fingerprint.value());
        int fingerprintLength = algorithm.length + 1 + fingerprintValue.length; // Fingerprint#encoded()
        byte[] out = new byte
                [OWNER_OFFSET
                        + digits(ownerBytes.length)
                        + 1
                        + ownerBytes.length
                        + digits(fingerprintLength)
                        + 1
                        + fingerprintLength
                        + digits(nowMillis)
                        + 1];
        out[0] = VERSION;
        out[1] = 'P';
        fixed(out, 2, nowMillis + leaseMillis);
        fixed(out, 2 + WIDTH, nowMillis + ttl);
        fixed(out, 2 + 2 * WIDTH, ttl - leaseMillis);
        fixed(out, 2 + 3 * WIDTH, retentionMillis);
        int at = putDecimal(out, OWNER_OFFSET, ownerBytes.length);
        out[at++] = ':';
        at = put(out, at, ownerBytes);
        at = putDecimal(out, at, fingerprintLength);
        out[at++] = ':';
        at = put(out, at, algorithm);
        out[at++] = ':';
        at = put(out, at, fingerprintValue);
        at = putDecimal(out, at, nowMillis);
        out[at] = ':';
        return out;
    }

    /** The number of decimal digits of {@code value} (not negative). */
    private static int digits(long value) {
        int n = 1;
        for (long bound = 10; n < 19 && value >= bound; bound *= 10) {
            n++;
        }
        return n;
    }

    /** Writes {@code value} (not negative) in decimal at {@code at}; returns the position after it. */
    private static int putDecimal(byte[] out, int at, long value) {
        int end = at + digits(value);
        long rest = value;
        for (int i = end - 1; i >= at; i--) {
            out[i] = (byte) ('0' + rest % 10);
            rest /= 10;
        }
        return end;
    }

    /** The owner as a layout-2 value holds it at {@link #OWNER_OFFSET}: {@code owner_len:owner}. */
    public static byte[] fence(OwnerToken owner) {
        byte[] ownerBytes = ascii(owner.value());
        byte[] length = decimal(ownerBytes.length);
        byte[] out = new byte[length.length + 1 + ownerBytes.length];
        int at = put(out, 0, length);
        out[at++] = ':';
        put(out, at, ownerBytes);
        return out;
    }

    /**
     * The front of a finished layout-2 value up to the retention (which the completion script keeps from
     * the processing value): {@code 2}, the status, the finish time and two zero fields.
     */
    public static byte[] finishedFront(RecordStatus status, long finishedAtMillis) {
        byte[] out = new byte[2 + 3 * WIDTH];
        putFinishedFront(out, status, finishedAtMillis);
        return out;
    }

    private static void putFinishedFront(byte[] out, RecordStatus status, long finishedAtMillis) {
        out[0] = VERSION;
        out[1] = switch (status) {
            case COMPLETED -> 'C';
            case FAILED -> 'F';
            default -> throw new IllegalArgumentException("not a finished status: " + status);
        };
        fixed(out, 2, finishedAtMillis);
        fixed(out, 2 + WIDTH, 0);
        fixed(out, 2 + 2 * WIDTH, 0);
    }

    /**
     * The whole finished layout-2 value of a processing value its owner holds: the finished front, then
     * the processing value from its retention on (retention, owner, fingerprint, creation time, which no
     * one changes while the owner holds the record), then {@code part} ({@link #finishedPart}). What
     * complete.lua would assemble on the server from the stored value.
     *
     * @throws IllegalArgumentException {@code processing} is not a processing value of layout 2
     */
    public static byte[] finished(byte[] processing, RecordStatus status, long finishedAtMillis, byte[] part) {
        requireProcessing(processing);
        int front = 2 + 3 * WIDTH;
        int kept = processing.length - front;
        byte[] out = new byte[front + kept + part.length];
        putFinishedFront(out, status, finishedAtMillis);
        System.arraycopy(processing, front, out, front, kept);
        System.arraycopy(part, 0, out, front + kept, part.length);
        return out;
    }

    /**
     * The retention of a processing layout-2 value as {@code PX} takes it: decimal, no leading zeros.
     *
     * @throws IllegalArgumentException {@code processing} is not a processing value of layout 2
     */
    public static byte[] retention(byte[] processing) {
        requireProcessing(processing);
        return decimal(fixed(processing, 2 + 3 * WIDTH));
    }

    private static void requireProcessing(byte[] value) {
        if (value.length <= OWNER_OFFSET || value[0] != VERSION || value[1] != 'P') {
            throw new IllegalArgumentException("not a processing record of layout 2");
        }
    }

    /** The finished part: {@code response_status:headers_len:headers body}. */
    public static byte[] finishedPart(StoredResponse response) {
        int status = response.status(); // three digits
        int headersLength = HeaderCodec.encodedLength(response.headers());
        byte[] body = response.body();
        byte[] out = new byte[digits(status) + 1 + digits(headersLength) + 1 + headersLength + body.length];
        int at = putDecimal(out, 0, status);
        out[at++] = ':';
        at = putDecimal(out, at, headersLength);
        out[at++] = ':';
        at = HeaderCodec.encodeInto(response.headers(), out, at);
        put(out, at, body);
        return out;
    }

    /**
     * Reads a value of either layout.
     *
     * @throws IllegalArgumentException the bytes are not a record of a known layout
     */
    public static IdempotencyRecord decode(ScopeKey key, byte[] value) {
        if (value.length < 2 || (value[0] != VERSION && value[0] != LEGACY_VERSION)) {
            throw new IllegalArgumentException("unknown record layout");
        }
        RecordStatus status = switch (value[1]) {
            case 'P' -> RecordStatus.PROCESSING;
            case 'C' -> RecordStatus.COMPLETED;
            case 'F' -> RecordStatus.FAILED;
            default -> throw new IllegalArgumentException("unknown record status");
        };
        return value[0] == VERSION ? decodeCurrent(key, status, value) : decodeLegacy(key, status, value);
    }

    private static IdempotencyRecord decodeCurrent(ScopeKey key, RecordStatus status, byte[] value) {
        if (value.length < OWNER_OFFSET) {
            throw new IllegalArgumentException("truncated record");
        }
        long a = fixed(value, 2);
        long b = fixed(value, 2 + WIDTH);
        long retention = fixed(value, 2 + 3 * WIDTH);
        Reader in = new Reader(value);
        in.position = OWNER_OFFSET;
        OwnerToken owner = new OwnerToken(in.text(in.length()));
        Fingerprint fingerprint = Fingerprint.decode(in.text(in.length()));
        long created = in.number();
        if (status == RecordStatus.PROCESSING) {
            if (in.position != value.length) {
                throw new IllegalArgumentException("trailing bytes after a processing record");
            }
            return new IdempotencyRecord(
                    key,
                    status,
                    fingerprint,
                    owner,
                    Instant.ofEpochMilli(created),
                    Instant.ofEpochMilli(a),
                    Instant.ofEpochMilli(b),
                    null);
        }
        return new IdempotencyRecord(
                key,
                status,
                fingerprint,
                owner,
                Instant.ofEpochMilli(created),
                null,
                Instant.ofEpochMilli(a + retention),
                response(in, value));
    }

    private static IdempotencyRecord decodeLegacy(ScopeKey key, RecordStatus status, byte[] value) {
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
            response = response(in, value);
        }
        return new IdempotencyRecord(
                key,
                status,
                fingerprint,
                owner,
                Instant.ofEpochMilli(created),
                leaseEnd,
                Instant.ofEpochMilli(expires),
                response);
    }

    private static StoredResponse response(Reader in, byte[] value) {
        int responseStatus = Math.toIntExact(in.number());
        int headersLength = in.length();
        Map<String, List<String>> headers = HeaderCodec.decode(value, in.position, headersLength);
        in.position += headersLength;
        return new StoredResponse(responseStatus, headers, Arrays.copyOfRange(value, in.position, value.length));
    }

    private static void fixed(byte[] out, int at, long value) {
        if (value < 0 || value > MAX_FIXED) {
            throw new IllegalArgumentException("out of the record's range: " + value);
        }
        long rest = value;
        for (int i = at + WIDTH - 1; i >= at; i--) {
            out[i] = (byte) ('0' + rest % 10);
            rest /= 10;
        }
    }

    private static long fixed(byte[] value, int at) {
        long n = 0;
        for (int i = at; i < at + WIDTH; i++) {
            int digit = value[i] - '0';
            if (digit < 0 || digit > 9) {
                throw new IllegalArgumentException("corrupt number in record at byte " + i);
            }
            n = n * 10 + digit;
        }
        return n;
    }

    private static int put(byte[] out, int at, byte[] bytes) {
        System.arraycopy(bytes, 0, out, at, bytes.length);
        return at + bytes.length;
    }

    /** Whole milliseconds as the decimal ASCII a script reads with {@code tonumber}. */
    public static byte[] decimal(long value) {
        return ascii(Long.toString(value));
    }

    /** The text of ASCII (or UTF-8) bytes. */
    public static String text(byte[] value) {
        return new String(value, StandardCharsets.UTF_8);
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
    }
}
