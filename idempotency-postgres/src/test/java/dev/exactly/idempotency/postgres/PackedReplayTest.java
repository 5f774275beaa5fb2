package dev.exactly.idempotency.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The layout of the packed replay column, byte by byte; the row trigger that writes it is tested on PostgreSQL. */
class PackedReplayTest {
    private static final ScopeKey KEY = TestDatabase.randomKey();
    private static final byte[] BODY = "{}".getBytes(StandardCharsets.UTF_8);
    /** 2026-01-01T00:00:00.123456Z in microseconds since 2000-01-01. */
    private static final long CREATED = 820_540_800_123_456L;

    @Test
    void readsEveryFieldAndTheHeadersInOrder() throws IOException {
        byte[] packed = packed(
                1,
                CREATED,
                CREATED + 60_000_000L,
                201,
                1,
                "FAILED",
                "jcs-sha256:ab",
                null,
                "x-b",
                "1",
                "x-a",
                "2",
                "x-b",
                "");
        IdempotencyRecord record = PackedReplay.record(KEY, packed, BODY);
        assertThat(record).isNotNull();
        assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
        assertThat(record.fingerprint()).isEqualTo(new Fingerprint("jcs-sha256", "ab"));
        assertThat(record.owner()).isNull();
        assertThat(record.createdAt()).isEqualTo(Instant.parse("2026-01-01T00:00:00.123456Z"));
        assertThat(record.expiresAt()).isEqualTo(Instant.parse("2026-01-01T00:01:00.123456Z"));
        assertThat(record.leaseExpiresAt()).isNull();
        assertThat(record.response().status()).isEqualTo(201);
        assertThat(record.response().headers())
                .containsExactly(Map.entry("x-b", List.of("1", "")), Map.entry("x-a", List.of("2")));
        assertThat(record.response().body()).isEqualTo(BODY);

        IdempotencyRecord owned =
                PackedReplay.record(KEY, packed(1, CREATED, CREATED + 1, 200, 0, "COMPLETED", "a:b", "owner-1"), BODY);
        assertThat(owned).isNotNull();
        assertThat(owned.owner()).isEqualTo(new OwnerToken("owner-1"));
        assertThat(owned.response().headers()).isEmpty();
    }

    @Test
    void whatItCannotReadGoesToTheColumns() throws IOException {
        byte[] packed = packed(1, CREATED, CREATED + 1, 200, 0, "COMPLETED", "a:b", "o");
        assertThat(PackedReplay.record(KEY, packed, BODY)).isNotNull();
        assertThat(PackedReplay.record(KEY, null, BODY))
                .as("in flight, or finished before V12")
                .isNull();
        assertThat(PackedReplay.record(KEY, packed, null)).isNull();
        assertThat(PackedReplay.record(KEY, new byte[0], BODY)).isNull();
        assertThat(PackedReplay.record(KEY, packed(2, CREATED, CREATED + 1, 200, 0, "COMPLETED", "a:b", "o"), BODY))
                .as("a later version")
                .isNull();
        assertThat(PackedReplay.record(KEY, packed(1, CREATED, Long.MAX_VALUE, 200, 0, "COMPLETED", "a:b", "o"), BODY))
                .as("expiring at infinity")
                .isNull();
        // bytes the trigger does not write
        for (int cut = 1; cut < packed.length; cut++) {
            assertThat(PackedReplay.record(KEY, Arrays.copyOf(packed, cut), BODY))
                    .as("cut at %d", cut)
                    .isNull();
        }
        assertThat(PackedReplay.record(KEY, Arrays.copyOf(packed, packed.length + 1), BODY))
                .as("a byte more")
                .isNull();
        assertThat(PackedReplay.record(KEY, packed(1, CREATED, CREATED + 1, 200, 0, "PROCESSING", "a:b", "o"), BODY))
                .isNull();
        assertThat(PackedReplay.record(KEY, packed(1, CREATED, CREATED + 1, 200, 0, "DONE", "a:b", "o"), BODY))
                .isNull();
        assertThat(PackedReplay.record(KEY, packed(1, CREATED, CREATED + 1, 200, 0, "COMPLETED", "nocolon", "o"), BODY))
                .isNull();
        assertThat(PackedReplay.record(
                        KEY, packed(1, CREATED, CREATED + 1, 200, 0, "COMPLETED", "a:b", "o", "odd"), BODY))
                .as("a header without its value")
                .isNull();
        assertThat(PackedReplay.record(KEY, packed(1, CREATED, CREATED + 1, 200, 1, "COMPLETED", null, "o"), BODY))
                .as("no fingerprint")
                .isNull();
        byte[] huge = packed.clone();
        huge[1 + 8 + 8 + 4 + 4 + 4 + 4 + 4 + 4] = 0x7f; // the first element's length, far past the end
        assertThat(PackedReplay.record(KEY, huge, BODY)).isNull();
    }

    /** The column as V12's trigger writes it: version, times, response status, then array_send's text[]. */
    private static byte[] packed(int version, long created, long expires, int status, int hasNull, String... fields)
            throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeByte(version);
        out.writeLong(created);
        out.writeLong(expires);
        out.writeInt(status);
        out.writeInt(1); // dimensions
        out.writeInt(hasNull);
        out.writeInt(25); // text
        out.writeInt(fields.length);
        out.writeInt(1); // lower bound
        for (String field : fields) {
            if (field == null) {
                out.writeInt(-1);
            } else {
                byte[] utf8 = field.getBytes(StandardCharsets.UTF_8);
                out.writeInt(utf8.length);
                out.write(utf8);
            }
        }
        return bytes.toByteArray();
    }
}
