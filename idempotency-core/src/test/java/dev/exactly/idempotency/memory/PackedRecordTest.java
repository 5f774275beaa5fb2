package dev.exactly.idempotency.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.MutableClock;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PackedRecordTest {
    private static final ScopeKey KEY = new Scope("t", "POST", "/r", new IdempotencyKey("k")).toScopeKey();

    private static IdempotencyRecord finished(
            RecordStatus status, StoredResponse response, Instant createdAt, Instant expiresAt) {
        return new IdempotencyRecord(
                KEY,
                status,
                new Fingerprint("sha256-jcs", "ab".repeat(32)),
                new OwnerToken("0123456789abcdef0123456789abcdef"),
                createdAt,
                null,
                expiresAt,
                response);
    }

    @Test
    void aFinishedRecordDecodesToWhatWasPacked() {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("content-type", List.of("application/json; charset=utf-8"));
        headers.put("set-cookie", List.of("a=1", "b=2", ""));
        headers.put("x-naïve-☃", List.of("wert: äöü €", "\u0000\uffff"));
        byte[] body = "{\"id\":\"ch_1\",\"amount\":1000,\"note\":\"ünïcödé ☃\"}".getBytes(StandardCharsets.UTF_8);
        IdempotencyRecord record = finished(
                RecordStatus.COMPLETED,
                new StoredResponse(201, headers, body),
                Instant.parse("2026-03-01T10:00:00.123456789Z"),
                Instant.parse("2026-03-02T10:00:00.987654321Z"));

        IdempotencyRecord decoded = PackedRecord.of(record).record(KEY);

        assertThat(decoded).isEqualTo(record);
        assertThat(decoded.response().headers().keySet()).containsExactly("content-type", "set-cookie", "x-naïve-☃");
        assertThat(decoded.response().headers().get("set-cookie")).containsExactly("a=1", "b=2", "");
    }

    @Test
    void aFailedRecordWithNoHeadersAndAnEmptyOrLargeBodyDecodes() {
        Instant at = Instant.parse("2026-03-01T10:00:00Z");
        IdempotencyRecord empty =
                finished(RecordStatus.FAILED, StoredResponse.of(500, new byte[0]), at, at.plusSeconds(1));
        assertThat(PackedRecord.of(empty).record(KEY)).isEqualTo(empty);

        byte[] large = new byte[3 * 1024 * 1024 + 7];
        new Random(42).nextBytes(large);
        IdempotencyRecord big = finished(RecordStatus.COMPLETED, StoredResponse.of(200, large), at, at.plusSeconds(1));
        PackedRecord packed = PackedRecord.of(big);
        assertThat(packed.record(KEY)).isEqualTo(big);
        assertThat(packed.record(KEY).response())
                .as("kept as given: a replay copies no body")
                .isSameAs(big.response());
        assertThat(packed.packedLength())
                .as("owner and fingerprint with their lengths")
                .isEqualTo(12 + 32 + 10 + 64);
    }

    @Test
    void aRecordOfAnyTextDecodes() {
        Instant at = Instant.parse("2026-03-01T10:00:00Z");
        IdempotencyRecord odd = new IdempotencyRecord(
                KEY,
                RecordStatus.COMPLETED,
                new Fingerprint("älg-☃", "v:1:\u0000"),
                new OwnerToken("ø".repeat(64)),
                at,
                null,
                at.plusSeconds(1),
                StoredResponse.of(200, new byte[] {1}));
        assertThat(PackedRecord.of(odd).record(KEY)).isEqualTo(odd);
    }

    @Test
    void everyReadDecodesItsOwnCopy() {
        byte[] body = {1, 2, 3};
        Instant at = Instant.parse("2026-03-01T10:00:00Z");
        PackedRecord packed =
                PackedRecord.of(finished(RecordStatus.COMPLETED, StoredResponse.of(200, body), at, at.plusSeconds(60)));
        byte[] first = packed.record(KEY).response().body();
        first[0] = 9;
        assertThat(packed.record(KEY).response().body()).containsExactly(1, 2, 3);
    }

    @Test
    void itExpiresAtItsExpiryToTheNanosecond() {
        Instant expires = Instant.parse("2026-03-01T10:00:00.000000500Z");
        PackedRecord packed = PackedRecord.of(finished(
                RecordStatus.COMPLETED, StoredResponse.of(200, new byte[0]), expires.minusSeconds(5), expires));
        assertThat(packed.expired(expires.minusNanos(1))).isFalse();
        assertThat(packed.expired(expires.minusSeconds(1).plusNanos(999))).isFalse();
        assertThat(packed.expired(expires)).isTrue();
        assertThat(packed.expired(expires.plusSeconds(1).minusNanos(600))).isTrue();
        assertThat(packed.expiresAtMillis()).isEqualTo(expires.toEpochMilli());

        PackedRecord never = PackedRecord.of(
                finished(RecordStatus.COMPLETED, StoredResponse.of(200, new byte[0]), expires, Instant.MAX));
        assertThat(never.expired(expires.plus(Duration.ofDays(365 * 1000)))).isFalse();
        assertThat(never.expiresAtMillis()).isEqualTo(Long.MAX_VALUE);
        PackedRecord longAgo = PackedRecord.of(
                finished(RecordStatus.COMPLETED, StoredResponse.of(200, new byte[0]), Instant.MIN, Instant.MIN));
        assertThat(longAgo.expired(expires)).isTrue();
        assertThat(longAgo.expiresAtMillis()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void onlyAFinishedRecordIsPacked() {
        Instant at = Instant.parse("2026-03-01T10:00:00Z");
        IdempotencyRecord processing = new IdempotencyRecord(
                KEY,
                RecordStatus.PROCESSING,
                new Fingerprint("a", "b"),
                OwnerToken.random(),
                at,
                at.plusSeconds(1),
                at.plusSeconds(2),
                null);
        assertThatThrownBy(() -> PackedRecord.of(processing)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theStoreReplaysAFinishedRecordWithItsResponseOwnerAndTimes() {
        MutableClock clock = new MutableClock(Instant.parse("2026-03-01T10:00:00.000000001Z"));
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 10);
        Fingerprint fingerprint = new Fingerprint("sha256-jcs", "cd".repeat(32));
        OwnerToken owner = OwnerToken.random();
        assertThat(store.claim(KEY, fingerprint, owner, Duration.ofSeconds(30), Duration.ofHours(1)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        clock.advance(Duration.ofMillis(1500));
        StoredResponse response = new StoredResponse(
                201,
                Map.of("location", List.of("/v1/charges/ch_1")),
                "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(store.complete(KEY, owner, RecordStatus.COMPLETED, response)).isTrue();
        assertThat(store.complete(KEY, owner, RecordStatus.FAILED, response))
                .as("a finished record is final")
                .isFalse();
        assertThat(store.renew(KEY, owner, Duration.ofSeconds(30))).isFalse();
        assertThat(store.release(KEY, owner)).isFalse();

        IdempotencyRecord expected = new IdempotencyRecord(
                KEY,
                RecordStatus.COMPLETED,
                fingerprint,
                owner,
                Instant.parse("2026-03-01T10:00:00.000000001Z"),
                null,
                Instant.parse("2026-03-01T11:00:01.500000001Z"),
                response);
        assertThat(store.find(KEY)).contains(expected);
        assertThat(store.claim(KEY, fingerprint, OwnerToken.random(), Duration.ofSeconds(30), Duration.ofHours(1)))
                .isEqualTo(new ClaimOutcome.Finished(expected));

        clock.advance(Duration.ofHours(1));
        assertThat(store.claim(KEY, fingerprint, OwnerToken.random(), Duration.ofSeconds(30), Duration.ofHours(1)))
                .as("expired at its retention after the completion: a new claim")
                .isInstanceOf(ClaimOutcome.Claimed.class);
    }
}
