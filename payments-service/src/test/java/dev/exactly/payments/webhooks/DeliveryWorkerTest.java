package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.exactly.payments.db.Jdbc;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The outbox and the delivery worker on PostgreSQL, against a real receiving HTTP server: events commit
 * with the caller's transaction, deliveries are signed, retried with backoff after failures (same event
 * id, same bytes), dead-lettered after the last attempt, and never sent twice at once by concurrent
 * workers.
 */
class DeliveryWorkerTest {
    private static WebhookDatabase db;
    private final List<Receiver> receivers = new ArrayList<>();

    @BeforeAll
    static void database() {
        db = new WebhookDatabase("webhooks_worker");
    }

    @AfterAll
    static void closeDatabase() {
        db.close();
    }

    @AfterEach
    void stopReceivers() {
        receivers.forEach(Receiver::close);
        // every test leaves no due delivery behind for the next one
        db.jdbc.inTransaction(c -> Jdbc.update(
                c, "UPDATE payments_webhook_endpoint SET status = 'disabled' WHERE status = 'enabled'", s -> {}));
        db.jdbc.inTransaction(c -> Jdbc.update(
                c, "UPDATE payments_webhook_delivery SET status = 'canceled' WHERE status = 'pending'", s -> {}));
    }

    private Receiver receiver() {
        Receiver r = Receiver.start();
        receivers.add(r);
        return r;
    }

    private static RetrySchedule fast(int maxAttempts) {
        return new RetrySchedule(maxAttempts, Duration.ofMillis(200), Duration.ofSeconds(2));
    }

    /** Runs the worker until {@code done} holds (bounded). */
    private static void runUntil(DeliveryWorker worker, java.util.function.BooleanSupplier done) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    worker.runOnce();
                    return done.getAsBoolean();
                });
    }

    @Test
    void aDeliveryIsSignedOverTheTimestampAndTheExactBody() {
        Receiver receiver = receiver();
        EndpointResult.Created endpoint = db.endpoint(receiver.url());
        String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_signed");
        runUntil(
                db.worker(20, 2, fast(3)),
                () -> "delivered".equals(db.delivery(event).get("status")));

        Receiver.Request got = receiver.received().getFirst();
        assertThat(got.eventId()).isEqualTo(event);
        assertThat(got.eventType()).isEqualTo("charge.succeeded");
        assertThat(got.attempt()).isEqualTo("1");
        assertThat(got.contentType()).isEqualTo("application/json");
        assertThat(got.text())
                .startsWith("{\"id\":\"" + event + "\",\"object\":\"event\",\"type\":\"charge.succeeded\",")
                .contains("\"subject\":\"ch_signed\"", "\"data\":{\"object\":{\"id\":\"ch_signed\"");
        assertThat(got.signature()).matches("t=\\d+,v1=[0-9a-f]{64}");

        // the receiver's check passes with the endpoint's secret and the raw body
        WebhookSignature.verify(endpoint.secret(), got.signature(), got.body(), WebhookSignature.DEFAULT_TOLERANCE);
        // and fails for anything else: another secret, an altered body, a stale timestamp (a replay)
        assertThatThrownBy(() ->
                        WebhookSignature.verify("whsec_other", got.signature(), got.body(), Duration.ofMinutes(5)))
                .hasMessageContaining("no signature matches");
        byte[] altered = got.text().replace("1999", "9999").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThatThrownBy(() ->
                        WebhookSignature.verify(endpoint.secret(), got.signature(), altered, Duration.ofMinutes(5)))
                .hasMessageContaining("no signature matches");
        InstantSource tenMinutesLater = InstantSource.fixed(Instant.now().plus(Duration.ofMinutes(10)));
        assertThatThrownBy(() -> WebhookSignature.verify(
                        endpoint.secret(), got.signature(), got.body(), Duration.ofMinutes(5), tenMinutesLater))
                .hasMessageContaining("outside the tolerance");
    }

    @Test
    void failuresAreRetriedWithGrowingPausesAndTheSameEventIdUntilA2xx() {
        Receiver receiver = receiver().answering(n -> n <= 3 ? 500 : 204);
        EndpointResult.Created endpoint = db.endpoint(receiver.url());
        String event = db.record(EventType.CHARGE_FAILED, "ch_retried");
        runUntil(
                db.worker(20, 2, fast(6)),
                () -> "delivered".equals(db.delivery(event).get("status")));

        List<Receiver.Request> got = receiver.received();
        assertThat(got).hasSize(4);
        assertThat(got).extracting(Receiver.Request::eventId).containsOnly(event);
        assertThat(got).extracting(Receiver.Request::attempt).containsExactly("1", "2", "3", "4");
        assertThat(got)
                .extracting(Receiver.Request::text)
                .containsOnly(got.getFirst().text());
        got.forEach(r -> WebhookSignature.verify(endpoint.secret(), r.signature(), r.body(), Duration.ofMinutes(5)));
        // pauses of at least half their ceiling: 200 ms, 400 ms, 800 ms
        for (int i = 1; i < got.size(); i++) {
            long gapMillis = TimeUnit.NANOSECONDS.toMillis(
                    got.get(i).nanos() - got.get(i - 1).nanos());
            assertThat(gapMillis).as("pause before attempt %d", i + 1).isGreaterThanOrEqualTo(100L << (i - 1));
        }
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("attempts")).isEqualTo(4);
        assertThat(row.get("last_status")).isEqualTo(204);
        assertThat(row.get("delivered_at")).isNotNull();
        assertThat(row.get("claim_token")).isNull();
    }

    @Test
    void afterTheLastFailedAttemptTheDeliveryIsDeadLettered() {
        Receiver receiver = receiver().answering(n -> 503);
        db.endpoint(receiver.url());
        String event = db.record(EventType.REFUND_SUCCEEDED, "re_dead");
        DeliveryWorker worker = db.worker(20, 2, fast(3));
        runUntil(worker, () -> "dead_lettered".equals(db.delivery(event).get("status")));
        // nothing more is sent, however long the worker runs
        for (int i = 0; i < 20; i++) {
            worker.runOnce();
        }
        assertThat(receiver.received())
                .hasSize(3)
                .extracting(Receiver.Request::attempt)
                .containsExactly("1", "2", "3");
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("attempts")).isEqualTo(3);
        assertThat(row.get("last_status")).isEqualTo(503);
        assertThat(row.get("last_error")).isEqualTo("HTTP 503");

        // the receiver is fixed: a redelivery starts the dead letter over, same event, attempts from 1
        receiver.answering(n -> n <= 3 ? 503 : 200);
        Events events = new Events(db.jdbc, InstantSource.system());
        assertThat(events.redeliver(WebhookDatabase.TENANT, event))
                .get()
                .satisfies(d ->
                        assertThat(d.deliveries()).extracting(Delivery::status).containsExactly("pending"));
        runUntil(worker, () -> "delivered".equals(db.delivery(event).get("status")));
        assertThat(receiver.received())
                .hasSize(4)
                .extracting(Receiver.Request::eventId)
                .containsOnly(event);
        assertThat(receiver.received().getLast().attempt()).isEqualTo("1");
        assertThat(db.delivery(event).get("attempts")).isEqualTo(1);
        // a repeat changes nothing: a delivered delivery stays delivered
        assertThat(events.redeliver(WebhookDatabase.TENANT, event))
                .get()
                .satisfies(d ->
                        assertThat(d.deliveries()).extracting(Delivery::status).containsExactly("delivered"));
        assertThat(events.redeliver("globex", event)).isEmpty();
    }

    @Test
    void anUnreachableEndpointIsAFailedAttemptNotALostEvent() {
        Receiver closed = Receiver.start();
        String url = closed.url();
        closed.close();
        db.endpoint(url);
        String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_unreachable");
        runUntil(
                db.worker(20, 1, fast(2)),
                () -> "dead_lettered".equals(db.delivery(event).get("status")));
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("attempts")).isEqualTo(2);
        assertThat(row.get("last_status")).isNull();
        // the tenant sees a fixed phrase, never the exception's class or text
        assertThat(row.get("last_error")).isEqualTo("the connection failed");
    }

    @Test
    void anEventCommitsAndRollsBackWithTheCallersTransaction() {
        Receiver receiver = receiver();
        db.endpoint(receiver.url());
        String[] rolledBack = new String[1];
        assertThatThrownBy(() -> db.jdbc.inTransaction(c -> {
                    rolledBack[0] = db.outbox.record(
                            c,
                            WebhookDatabase.TENANT,
                            EventType.CHARGE_SUCCEEDED,
                            "ch_rolled_back",
                            "{\"id\":\"ch_rolled_back\"}");
                    throw new IllegalStateException("the business transaction fails after recording");
                }))
                .hasMessageContaining("business transaction fails");
        String committed = db.record(EventType.CHARGE_SUCCEEDED, "ch_committed");
        runUntil(
                db.worker(20, 1, fast(3)),
                () -> "delivered".equals(db.delivery(committed).get("status")));
        assertThat(db.deliveries(rolledBack[0])).isEmpty();
        assertThat(db.jdbc.query(
                        "SELECT id FROM payments_event WHERE id = ?",
                        s -> s.setString(1, rolledBack[0]),
                        rs -> rs.getString(1)))
                .isEmpty();
        assertThat(receiver.received()).extracting(Receiver.Request::eventId).containsExactly(committed);
    }

    @Test
    void endpointsGetTheTypesTheyListenToAndDisablingCancelsPendingDeliveries() {
        Receiver refunds = receiver();
        Receiver everything = receiver();
        Receiver disabled = receiver();
        db.endpoint(refunds.url(), "refund.succeeded");
        db.endpoint(everything.url());
        EndpointResult.Created off = db.endpoint(disabled.url(), "charge.succeeded", "refund.succeeded");
        String charge = db.record(EventType.CHARGE_SUCCEEDED, "ch_filtered");
        String refund = db.record(EventType.REFUND_SUCCEEDED, "re_filtered");
        assertThat(db.endpoints.disable(WebhookDatabase.TENANT, off.endpoint().id()))
                .get()
                .extracting(Endpoint::enabled)
                .isEqualTo(false);
        String after = db.record(EventType.CHARGE_SUCCEEDED, "ch_after_disable");
        runUntil(
                db.worker(20, 2, fast(3)),
                () -> everything.received().size() == 3 && refunds.received().size() == 1);

        assertThat(refunds.received()).extracting(Receiver.Request::eventId).containsExactly(refund);
        assertThat(everything.received())
                .extracting(Receiver.Request::eventId)
                .containsExactlyInAnyOrder(charge, refund, after);
        assertThat(disabled.received()).isEmpty();
        assertThat(db.deliveries(charge))
                .extracting(r -> r.get("status"))
                .containsExactlyInAnyOrder("delivered", "canceled");
        assertThat(db.deliveries(after)).hasSize(1);
    }

    @Test
    void concurrentWorkersNeverSendTheSameDueAttemptTwice() throws Exception {
        int events = 40;
        CountDownLatch overlapped = new CountDownLatch(1);
        // each request is held until two are in flight at once (or 300 ms), so the workers really overlap
        Receiver receiver = receiver();
        receiver.holding(n -> {
            if (receiver.inFlight() >= 2) {
                overlapped.countDown();
            } else {
                overlapped.await(300, TimeUnit.MILLISECONDS);
            }
        });
        db.endpoint(receiver.url());
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < events; i++) {
            ids.add(db.record(EventType.CHARGE_SUCCEEDED, "ch_race_" + i));
        }
        int workers = 4;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> claims = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(workers)) {
            for (int w = 0; w < workers; w++) {
                DeliveryWorker worker = db.worker(3, 1, fast(5));
                claims.add(pool.submit(() -> {
                    go.await();
                    int claimed = 0;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (receiver.received().size() < events && System.nanoTime() < deadline) {
                        claimed += worker.runOnce();
                    }
                    return claimed;
                }));
            }
            go.countDown();
            List<Integer> perWorker = new ArrayList<>();
            for (Future<Integer> f : claims) {
                perWorker.add(f.get(90, TimeUnit.SECONDS));
            }
            assertThat(perWorker.stream().mapToInt(Integer::intValue).sum())
                    .as("claims, one per event")
                    .isEqualTo(events);
            assertThat(perWorker.stream().filter(n -> n > 0).count())
                    .as("workers that claimed some")
                    .isGreaterThanOrEqualTo(2);
        }
        Map<String, Long> perEvent = receiver.received().stream()
                .collect(Collectors.groupingBy(Receiver.Request::eventId, Collectors.counting()));
        assertThat(perEvent)
                .hasSize(events)
                .allSatisfy((id, n) -> assertThat(n).as(id).isEqualTo(1L));
        assertThat(perEvent.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(receiver.maxInFlight())
                .as("deliveries in flight at once (the workers overlapped)")
                .isGreaterThanOrEqualTo(2);
        assertThat(ids.stream().map(db::delivery).map(r -> r.get("status")).collect(Collectors.toSet()))
                .containsExactly("delivered");
        assertThat(ids.stream().map(db::delivery).map(r -> r.get("attempts")).collect(Collectors.toSet()))
                .containsExactly(1);
    }

    @Test
    void anEndlessAnswerBodyIsNotReadTheStatusDecides() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        CountDownLatch clientHungUp = new CountDownLatch(1);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(200, 0);
            byte[] chunk = new byte[64 * 1024];
            try (OutputStream out = exchange.getResponseBody()) {
                for (int i = 0; i < 16_384; i++) { // at most 1 GiB
                    out.write(chunk);
                    out.flush();
                }
            } catch (IOException e) {
                clientHungUp.countDown();
            }
        });
        server.start();
        try {
            db.endpoint("http://127.0.0.1:" + server.getAddress().getPort() + "/endless");
            String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_endless");
            runUntil(
                    db.worker(20, 1, fast(3)),
                    () -> "delivered".equals(db.delivery(event).get("status")));
            assertThat(clientHungUp.await(30, TimeUnit.SECONDS))
                    .as("the worker closed the answer unread")
                    .isTrue();
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aLastAttemptWhoseWorkerDiedIsDeadLetteredWhenItsClaimEnds() {
        Receiver receiver = receiver();
        db.endpoint(receiver.url());
        String event = db.record(EventType.CHARGE_FAILED, "ch_last_attempt");
        // as a worker that died after claiming the third and last attempt leaves it, its claim now over
        db.jdbc.inTransaction(c -> Jdbc.update(c, """
                UPDATE payments_webhook_delivery SET attempts = 3, claim_token = 'dead-worker', last_status = 500,
                       last_error = 'HTTP 500', next_attempt_at = now() - interval '1 second'
                 WHERE event_id = ?""", s -> s.setString(1, event)));
        DeliveryWorker worker = db.worker(20, 1, fast(3));
        worker.runOnce();
        worker.runOnce();
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("status")).isEqualTo("dead_lettered");
        assertThat(row.get("attempts")).isEqualTo(3);
        assertThat(row.get("claim_token")).isNull();
        assertThat((String) row.get("last_error")).startsWith("the last attempt ended without an answer recorded");
        assertThat(receiver.received()).isEmpty();
    }

    @Test
    void withoutPrivateNetworksALoopbackEndpointIsNeverCalled() {
        Receiver receiver = receiver();
        db.endpoint(receiver.url());
        String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_private");
        runUntil(
                db.worker(20, 1, fast(2), false),
                () -> "dead_lettered".equals(db.delivery(event).get("status")));
        assertThat(receiver.received()).isEmpty();
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("attempts")).isEqualTo(2);
        assertThat(row.get("last_status")).isNull();
        // the tenant is not told what the service's network resolves the name to, nor its settings
        assertThat(row.get("last_error")).isEqualTo("refused: the URL's host is not a public address");
    }

    @Test
    void aClaimTakesAFewDeliveriesOfEachEndpointOldestFirstAcrossEndpoints() {
        Receiver flood = receiver();
        Receiver quiet = receiver();
        db.endpointOf("flooding", flood.url());
        db.endpointOf("quiet", quiet.url());
        for (int i = 0; i < 30; i++) {
            db.recordOf("flooding", EventType.CHARGE_SUCCEEDED, "ch_flood_" + i);
        }
        String late = db.recordOf("quiet", EventType.CHARGE_SUCCEEDED, "ch_quiet");
        DeliveryWorker worker = db.worker(false, 10, 4, 3, fast(3), Duration.ofSeconds(4), true);

        // one claim of up to 10: the flood's endpoint gets 3 of them, however many of its deliveries are older
        assertThat(worker.runOnce()).isEqualTo(4);
        assertThat(flood.received()).hasSize(3);
        assertThat(flood.received())
                .extracting(Receiver.Request::text)
                .allSatisfy(t -> assertThat(t).containsAnyOf("ch_flood_0\"", "ch_flood_1\"", "ch_flood_2\""));
        assertThat(quiet.received()).extracting(Receiver.Request::eventId).containsExactly(late);
        runUntil(worker, () -> flood.received().size() == 30);
        assertThat(flood.received()).extracting(Receiver.Request::eventId).doesNotHaveDuplicates();
    }

    @Test
    void anEndpointThatHoldsItsRequestsTakesOnlyItsShareOfTheScheduledWorker() {
        CountDownLatch release = new CountDownLatch(1);
        Receiver slow = receiver();
        slow.holding(n -> release.await(30, TimeUnit.SECONDS));
        Receiver fast = receiver();
        db.endpointOf("slow-receiver", slow.url());
        db.endpointOf("fast-receiver", fast.url());
        List<String> held = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            held.add(db.recordOf("slow-receiver", EventType.CHARGE_SUCCEEDED, "ch_slow_" + i));
        }
        // held attempts do not time out while the test holds them
        DeliveryWorker worker = db.worker(true, 20, 4, 2, fast(12), Duration.ofSeconds(40), true);
        worker.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> slow.inFlight() == 2);
            // while the slow endpoint holds two attempts, and 18 of its deliveries are older, another
            // tenant's events are sent as they come
            for (int i = 0; i < 5; i++) {
                String event = db.recordOf("fast-receiver", EventType.CHARGE_SUCCEEDED, "ch_fast_" + i);
                await().atMost(Duration.ofSeconds(3))
                        .until(() -> fast.received().stream()
                                .anyMatch(r -> r.eventId().equals(event)));
            }
            assertThat(slow.maxInFlight())
                    .as("the slow endpoint's attempts at once")
                    .isEqualTo(2);
            assertThat(release.getCount()).as("still held").isEqualTo(1);
            release.countDown();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> held.stream()
                            .allMatch(id -> "delivered".equals(db.delivery(id).get("status"))));
            assertThat(slow.maxInFlight()).isEqualTo(2);
        } finally {
            release.countDown();
            worker.stop();
        }
    }

    @Test
    void theScheduledWorkerClaimsAgainOnceAQuarterOfItsAttemptsEndedNotAfterEachOne() {
        // eight attempts at once, so a claim waits for two free ones; the sweep's interval is long, so that
        // only ended attempts can start a claim
        List<CountDownLatch> answers = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            answers.add(new CountDownLatch(1));
        }
        Receiver receiver = receiver();
        receiver.holding(n -> answers.get(n - 1).await(30, TimeUnit.SECONDS));
        db.endpoint(receiver.url());
        for (int i = 0; i < 12; i++) {
            db.record(EventType.CHARGE_SUCCEEDED, "ch_batched_" + i);
        }
        DeliveryWorker worker =
                db.worker(true, Duration.ofSeconds(20), 20, 8, 8, fast(3), Duration.ofSeconds(40), true);
        worker.start();
        try {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> receiver.received().size() == 8);
            long claimsAtFull = worker.claimCount();
            answers.get(0).countDown();
            // one attempt ended: no claim for a single free attempt
            await().during(Duration.ofMillis(500))
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> receiver.received().size() == 8 && worker.claimCount() == claimsAtFull);
            answers.get(1).countDown();
            // two ended: one claim takes the next two
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> receiver.received().size() == 10);
            assertThat(worker.claimCount()).isEqualTo(claimsAtFull + 1);
        } finally {
            answers.forEach(CountDownLatch::countDown);
            worker.stop();
        }
    }

    @Test
    void aDeliveryLeftPendingForADisabledEndpointIsCanceledNotSent() {
        Receiver receiver = receiver();
        EndpointResult.Created endpoint = db.endpoint(receiver.url());
        String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_after_disable");
        // what an event's transaction that read the endpoint as enabled leaves when it commits after the
        // disabling canceled the endpoint's pending deliveries
        db.jdbc.inTransaction(c -> Jdbc.update(
                c,
                "UPDATE payments_webhook_endpoint SET status = 'disabled', " + "disabled_at = now() WHERE id = ?",
                s -> s.setString(1, endpoint.endpoint().id())));
        assertThat(db.delivery(event).get("status")).isEqualTo("pending");

        assertThat(db.worker(20, 2, fast(3)).runOnce()).isEqualTo(1);
        Map<String, Object> delivery = db.delivery(event);
        assertThat(delivery.get("status")).isEqualTo("canceled");
        assertThat(delivery.get("attempts")).isEqualTo(0);
        assertThat(delivery.get("last_error")).isEqualTo("endpoint disabled");
        assertThat(receiver.received()).isEmpty();
    }
}
