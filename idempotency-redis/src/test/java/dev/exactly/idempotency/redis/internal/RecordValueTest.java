package dev.exactly.idempotency.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RecordValueTest {
    private static final ScopeKey KEY =
            new ScopeKey("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    private static final OwnerToken OWNER = new OwnerToken("00112233445566778899aabbccddeeff");
    private static final Fingerprint FINGERPRINT = new Fingerprint("sha-256", "caf\u00e9");

    @Test
    void aNewClaimDecodesToTheRecordItStandsFor() {
        byte[] value = RecordValue.processing(OWNER, FINGERPRINT, 1_700_000_000_000L, 30_000, 86_400_000);
        String text = new String(value, StandardCharsets.UTF_8);
        assertThat(text)
                .startsWith("2P" + "1700000030000" + "1700086400000" + "0000086370000" + "0000086400000" + "32:"
                        + OWNER.value());
        assertThat(value[RecordValue.OWNER_OFFSET]).isEqualTo((byte) '3');
        assertThat(RecordValue.decode(KEY, value))
                .isEqualTo(RecordValue.claimed(KEY, FINGERPRINT, OWNER, 1_700_000_000_000L, 30_000, 86_400_000));
    }

    @Test
    void numbersOfEveryWidthAreWrittenInDecimal() {
        for (long now : new long[] {0, 9, 10, 99, 100, 999_999_999_999L, 1_000_000_000_000L}) {
            byte[] value = RecordValue.processing(OWNER, FINGERPRINT, now, 1, 1);
            assertThat(new String(value, StandardCharsets.UTF_8)).endsWith("13:sha-256:caf\u00e9" + now + ":");
            assertThat(RecordValue.decode(KEY, value))
                    .isEqualTo(RecordValue.claimed(KEY, FINGERPRINT, OWNER, now, 1, 1));
        }
    }

    @Test
    void aLeaseLongerThanTheRetentionKeepsTheRecordForTheLeaseAndMarksTheEndOfTheTtl() {
        byte[] value = RecordValue.processing(OWNER, FINGERPRINT, 1_000, 5_000, 2_000);
        IdempotencyRecord record = RecordValue.decode(KEY, value);
        assertThat(record.expiresAt()).isEqualTo(record.leaseExpiresAt()).isEqualTo(Instant.ofEpochMilli(6_000));
        assertThat(new String(value, StandardCharsets.UTF_8))
                .startsWith("2P" + "0000000006000" + "0000000006000" + "0000000000000" + "0000000002000");
    }

    @Test
    void aFinishedValueAsTheCompletionScriptAssemblesItDecodes() {
        byte[] processing = RecordValue.processing(OWNER, FINGERPRINT, 1_000, 30_000, 60_000);
        StoredResponse response =
                new StoredResponse(201, Map.of("x", List.of("1", "2")), new byte[] {0, (byte) 0xff, ':'});
        // complete.lua: front .. string.sub(current, 42) .. finished part
        byte[] front = RecordValue.finishedFront(RecordStatus.FAILED, 5_000);
        byte[] part = RecordValue.finishedPart(response);
        byte[] finished = new byte[front.length + processing.length - 41 + part.length];
        System.arraycopy(front, 0, finished, 0, front.length);
        System.arraycopy(processing, 41, finished, front.length, processing.length - 41);
        System.arraycopy(part, 0, finished, front.length + processing.length - 41, part.length);

        assertThat(RecordValue.finished(processing, RecordStatus.FAILED, 5_000, part))
                .as("what the owner sends (finish.lua) is what complete.lua assembles")
                .isEqualTo(finished);
        assertThat(new String(RecordValue.retention(processing), StandardCharsets.US_ASCII))
                .isEqualTo("60000");
        assertThatThrownBy(() -> RecordValue.finished(finished, RecordStatus.COMPLETED, 6_000, part))
                .as("only a processing value")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RecordValue.retention(finished)).isInstanceOf(IllegalArgumentException.class);

        IdempotencyRecord record = RecordValue.decode(KEY, finished);
        assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
        assertThat(record.owner()).isEqualTo(OWNER);
        assertThat(record.fingerprint()).isEqualTo(FINGERPRINT);
        assertThat(record.createdAt()).isEqualTo(Instant.ofEpochMilli(1_000));
        assertThat(record.leaseExpiresAt()).isNull();
        assertThat(record.expiresAt()).as("finished at + retention").isEqualTo(Instant.ofEpochMilli(65_000));
        assertThat(record.response()).isEqualTo(response);
    }

    @Test
    void theFenceIsWhatTheValueHoldsAtTheOwnerOffset() {
        byte[] value = RecordValue.processing(OWNER, FINGERPRINT, 1_000, 30_000, 60_000);
        byte[] fence = RecordValue.fence(OWNER);
        byte[] held =
                java.util.Arrays.copyOfRange(value, RecordValue.OWNER_OFFSET, RecordValue.OWNER_OFFSET + fence.length);
        assertThat(held).isEqualTo(fence);
        assertThat(new String(RecordValue.fence(new OwnerToken("3")), StandardCharsets.UTF_8))
                .as("the length first: no token is a prefix of another's fence")
                .isEqualTo("1:3");
    }

    @Test
    void valuesOfTheEarlierLayoutStillDecode() {
        byte[] headers = HeaderCodec.encode(Map.of("content-type", List.of("text/plain")));
        String head = "1C:1000:0:61000:60000:32:13:" + OWNER.value() + "sha-256:caf\u00e9";
        byte[] headBytes = (head + "200:" + headers.length + ":").getBytes(StandardCharsets.UTF_8);
        byte[] value = new byte[headBytes.length + headers.length + 2];
        System.arraycopy(headBytes, 0, value, 0, headBytes.length);
        System.arraycopy(headers, 0, value, headBytes.length, headers.length);
        value[value.length - 2] = 'o';
        value[value.length - 1] = 'k';

        IdempotencyRecord record = RecordValue.decode(KEY, value);
        assertThat(record)
                .isEqualTo(new IdempotencyRecord(
                        KEY,
                        RecordStatus.COMPLETED,
                        FINGERPRINT,
                        OWNER,
                        Instant.ofEpochMilli(1_000),
                        null,
                        Instant.ofEpochMilli(61_000),
                        new StoredResponse(
                                200,
                                Map.of("content-type", List.of("text/plain")),
                                "ok".getBytes(StandardCharsets.UTF_8))));

        IdempotencyRecord processing = RecordValue.decode(
                KEY,
                ("1P:1000:31000:61000:60000:32:13:" + OWNER.value() + "sha-256:caf\u00e9")
                        .getBytes(StandardCharsets.UTF_8));
        assertThat(processing.leaseExpiresAt()).isEqualTo(Instant.ofEpochMilli(31_000));
        assertThat(processing.status()).isEqualTo(RecordStatus.PROCESSING);
    }

    @Test
    void unknownOrCorruptValuesAreRefused() {
        assertThatThrownBy(() -> RecordValue.decode(KEY, "3P".getBytes(StandardCharsets.US_ASCII)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RecordValue.decode(KEY, "2P00000000x0000".getBytes(StandardCharsets.US_ASCII)))
                .isInstanceOf(IllegalArgumentException.class);
        byte[] value = RecordValue.processing(OWNER, FINGERPRINT, 1_000, 30_000, 60_000);
        value[5] = 'x';
        assertThatThrownBy(() -> RecordValue.decode(KEY, value)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RecordValue.processing(OWNER, FINGERPRINT, RecordValue.MAX_FIXED, 1, 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
