package dev.exactly.psp.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.psp.Capture;
import dev.exactly.psp.ChargeStatus;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspChargeRequest;
import dev.exactly.psp.PspOperation;
import dev.exactly.psp.PspRefund;
import dev.exactly.psp.PspRefundRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The book keeps what it was given, byte for byte and field for field, though it keeps it as bytes. */
class ChargeBookTest {
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-04T10:00:00.250Z"));
    private final InstantSource clock = () -> now.get();
    private final ChargeBook book = new ChargeBook(clock, true, Duration.ofMillis(1500));

    private static PspChargeRequest request() {
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("zeta", "last");
        metadata.put("order", "ord_\u00e9\u4e2d\uD83D\uDE00");
        metadata.put("lone", "\uD800 half a pair");
        metadata.put("empty", "");
        return new PspChargeRequest(
                1999, "USD", "tok_visa", "caf\u00e9 \uD83D\uDCB3 " + "x".repeat(900), metadata, true);
    }

    @Test
    void aChargeReadBackEqualsTheOneOpenedWithEveryField() {
        PspCharge opened = book.openCharge("py_1", "key-1", request(), null);
        assertThat(opened.status()).isEqualTo(ChargeStatus.CAPTURED);
        assertThat(book.chargeById("py_1")).contains(opened);
        assertThat(book.chargeByKey("key-1")).contains(opened);
        assertThat(opened.metadata())
                .containsEntry("lone", "\uD800 half a pair")
                .hasSize(4);
        assertThat(opened.description()).startsWith("caf\u00e9 \uD83D\uDCB3 ");

        PspCharge declined =
                book.openCharge("py_2", "key-2", PspChargeRequest.of(5, "eur", "tok_chargeDeclined"), "card_declined");
        assertThat(book.chargeById("py_2")).contains(declined);
        assertThat(declined.declineCode()).isEqualTo("card_declined");
        assertThat(declined.description()).isNull();
    }

    @Test
    void aHoldExpiresAtItsInstantToTheNanosecond() {
        PspCharge hold = book.openCharge("py_h", "key-h", request().authorizeOnly(), null);
        // created is the second the hold was placed; it expires 1.5 s after it
        assertThat(hold.expiresAt()).isEqualTo(Instant.parse("2026-12-04T10:00:01.500Z"));
        now.set(Instant.parse("2026-12-04T10:00:01.499999999Z"));
        assertThat(book.chargeById("py_h").orElseThrow().status()).isEqualTo(ChargeStatus.AUTHORIZED);
        now.set(Instant.parse("2026-12-04T10:00:01.500Z"));
        assertThat(book.chargeById("py_h").orElseThrow().status()).isEqualTo(ChargeStatus.EXPIRED);
        assertThat(book.capture("py_h", OptionalLong.empty(), "cap-h", null))
                .isEqualTo(new ChargeBook.Refused(
                        "authorization_expired", "the hold of charge py_h expired at 2026-12-04T10:00:01.500Z"));
    }

    @Test
    void aKeyReplaysItsAnswerByteForByteAndReportsAReuse() {
        byte[] body = "{\"id\":\"py_1\",\"note\":\"\u00e9\"}".getBytes(StandardCharsets.UTF_8);
        int[] decided = new int[1];
        ChargeBook.Outcome first = book.once(PspOperation.CHARGE, "key-1", "f1", () -> {
            decided[0]++;
            return new ChargeBook.Entry("f1", 201, body);
        });
        ChargeBook.Outcome again = book.once(PspOperation.CHARGE, "key-1", "f1", () -> {
            decided[0]++;
            return new ChargeBook.Entry("f1", 500, new byte[0]);
        });
        ChargeBook.Outcome reused = book.once(PspOperation.CHARGE, "key-1", "f2", () -> {
            decided[0]++;
            return new ChargeBook.Entry("f2", 500, new byte[0]);
        });
        ChargeBook.Outcome otherOperation =
                book.once(PspOperation.REFUND, "key-1", "f3", () -> new ChargeBook.Entry("f3", 402, new byte[] {1}));

        assertThat(decided[0]).isEqualTo(1);
        assertThat(first).isInstanceOf(ChargeBook.Created.class);
        assertThat(again).isInstanceOf(ChargeBook.Replayed.class);
        assertThat(reused).isInstanceOf(ChargeBook.KeyReused.class);
        assertThat(otherOperation).isInstanceOf(ChargeBook.Created.class);
        for (ChargeBook.Outcome o : List.of(again, reused)) {
            assertThat(o.entry().fingerprint()).isEqualTo("f1");
            assertThat(o.entry().status()).isEqualTo(201);
            assertThat(o.entry().body()).isEqualTo(body);
        }
    }

    @Test
    void theCaptureLogKeepsItsEntriesAmendsAndRemovalsAndItsNumbering() {
        PspChargeRequest request = request();
        book.openCharge("py_1", "key-1", request, null);
        book.openCharge("py_2", "key-2", request.authorizeOnly(), null);
        Instant captureTime = Instant.parse("2026-12-04T10:00:00.750Z");
        now.set(captureTime);
        assertThat(book.capture("py_2", OptionalLong.of(1500), "cap-2", null)).isInstanceOf(ChargeBook.Done.class);
        book.openCharge("py_3", "key-3", request, null);

        List<Capture> log = book.captures(null, null);
        assertThat(log).extracting(Capture::sequence).containsExactly(1L, 2L, 3L);
        assertThat(log).extracting(Capture::chargeId).containsExactly("py_1", "py_2", "py_3");
        assertThat(log.get(1).amount()).isEqualTo(1500);
        assertThat(log.get(1).idempotencyKey()).isEqualTo("cap-2");
        assertThat(log.get(1).capturedAt()).isEqualTo(captureTime);
        assertThat(log.get(0).capturedAt()).isEqualTo(Instant.parse("2026-12-04T10:00:00.250Z"));
        assertThat(log.get(0).metadata()).isEqualTo(request.metadata());
        assertThat(book.captures(captureTime, null))
                .extracting(Capture::chargeId)
                .containsExactly("py_2", "py_3");

        assertThat(book.amendCapture("py_1", 7)).map(Capture::amount).contains(7L);
        assertThat(book.captures(null, null).get(0).amount()).isEqualTo(7);
        assertThat(book.chargeById("py_1").orElseThrow().amountCaptured()).isEqualTo(1999);

        // removing the last entry: the next capture takes its number again; removing another keeps the numbers
        assertThat(book.removeCapture("py_3")).map(Capture::sequence).contains(3L);
        book.openCharge("py_4", "key-4", request, null);
        assertThat(book.removeCapture("py_2")).isPresent();
        assertThat(book.captures(null, null)).extracting(Capture::sequence).containsExactly(1L, 3L);
        assertThat(book.captureCounts()).containsExactly(Map.entry("key-1", 1L), Map.entry("key-4", 1L));

        book.clear();
        assertThat(book.captures(null, null)).isEmpty();
        assertThat(book.chargeById("py_1")).isEmpty();
        book.openCharge("py_5", "key-5", request, null);
        assertThat(book.captures(null, null)).extracting(Capture::sequence).containsExactly(1L);
    }

    @Test
    void refundsReadTheChargesCurrencyAndCapturedAmount() {
        book.openCharge("py_1", "key-1", request(), null);
        PspRefund wrongCurrency =
                book.refund("re_1", "rk-1", new PspRefundRequest("py_1", 100, "eur", null, Map.of()), null);
        PspRefund tooMuch =
                book.refund("re_2", "rk-2", new PspRefundRequest("py_1", 2000, "usd", null, Map.of()), null);
        PspRefund fine = book.refund("re_3", "rk-3", new PspRefundRequest("py_1", 1999, "usd", null, Map.of()), null);
        assertThat(wrongCurrency.failureCode()).isEqualTo("currency_mismatch");
        assertThat(tooMuch.failureCode()).isEqualTo("amount_too_large");
        assertThat(fine.succeeded()).isTrue();
        assertThat(book.chargeById("py_1").orElseThrow().amountRefunded()).isEqualTo(1999);
    }

    @Test
    void concurrentRequestsDecideEachKeyOnceAndCaptureAHoldOnce() throws Exception {
        int keys = 2_000;
        int threads = 8;
        Map<String, AtomicInteger> decisions = new ConcurrentHashMap<>();
        book.openCharge("py_hold", "key-hold", request().authorizeOnly(), null);
        AtomicInteger captured = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < keys; i++) {
                        // every thread sends every key: half of them from the first, half from the last, at once
                        int k = thread % 2 == 0 ? i : keys - 1 - i;
                        String key = "key-" + k;
                        ChargeBook.Outcome outcome = book.once(PspOperation.CHARGE, key, "f" + k, () -> {
                            decisions
                                    .computeIfAbsent(key, x -> new AtomicInteger())
                                    .incrementAndGet();
                            PspCharge charge = book.openCharge(
                                    "py_" + k, key, PspChargeRequest.of(100 + k, "usd", "tok_visa"), null);
                            return new ChargeBook.Entry(
                                    "f" + k, 200, charge.id().getBytes(StandardCharsets.UTF_8));
                        });
                        assertThat(new String(outcome.entry().body(), StandardCharsets.UTF_8))
                                .isEqualTo("py_" + k);
                    }
                    if (book.capture("py_hold", OptionalLong.empty(), "cap-" + thread, null)
                            instanceof ChargeBook.Done) {
                        captured.incrementAndGet();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get();
            }
        }
        assertThat(decisions)
                .hasSize(keys)
                .allSatisfy((key, count) -> assertThat(count.get()).as(key).isEqualTo(1));
        assertThat(captured.get()).isEqualTo(1);
        assertThat(book.captures(null, null)).hasSize(keys + 1);
        for (int k = 0; k < keys; k += 97) {
            assertThat(book.chargeByKey("key-" + k).orElseThrow().amount()).isEqualTo(100 + k);
            assertThat(book.chargeById("py_" + k).orElseThrow().idempotencyKey())
                    .isEqualTo("key-" + k);
        }
    }
}
