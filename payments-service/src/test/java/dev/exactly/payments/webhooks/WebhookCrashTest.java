package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.testing.Signals;
import dev.exactly.testing.TestPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code kill -9} of the delivery worker's process after the receiver got the event and before the worker
 * recorded the receiver's 2xx: a worker started afterwards sends the same event again (same id, same bytes)
 * once the dead worker's claim ends, and marks it delivered. The event is never lost.
 */
class WebhookCrashTest {
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stopProcesses() throws InterruptedException {
        for (Process p : processes) {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aWorkerKilledMidDeliveryIsFollowedByADeliveryOfTheSameEvent() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (WebhookDatabase db = new WebhookDatabase("webhooks_crash");
                Receiver receiver = Receiver.start()) {
            // the first delivery is held (no answer) until the test releases it, after the kill
            receiver.holding(n -> {
                if (n == 1) {
                    release.await(60, TimeUnit.SECONDS);
                }
            });
            EndpointResult.Created endpoint = db.endpoint(receiver.url());
            String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_crash");

            Process first = startWorker(db, "first");
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> !receiver.received().isEmpty());
            Signals.kill(first.pid());
            assertThat(first.waitFor(10, TimeUnit.SECONDS)).isTrue();

            // the kill hit its window: the receiver has the event, the database has no outcome of it
            Map<String, Object> claimed = db.delivery(event);
            assertThat(claimed.get("status")).isEqualTo("pending");
            assertThat(claimed.get("attempts")).isEqualTo(1);
            assertThat(claimed.get("claim_token")).isNotNull();
            assertThat(claimed.get("last_status")).isNull();
            assertThat(claimed.get("last_error")).isNull();
            release.countDown();

            long restarted = System.nanoTime();
            startWorker(db, "second");
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> "delivered".equals(db.delivery(event).get("status")));

            List<Receiver.Request> got = receiver.received();
            assertThat(got).hasSize(2);
            assertThat(got).extracting(Receiver.Request::eventId).containsOnly(event);
            assertThat(got).extracting(Receiver.Request::attempt).containsExactly("1", "2");
            assertThat(got.get(1).text()).isEqualTo(got.get(0).text());
            got.forEach(
                    r -> WebhookSignature.verify(endpoint.secret(), r.signature(), r.body(), Duration.ofMinutes(5)));
            Map<String, Object> row = db.delivery(event);
            // sent again only once the dead worker's claim ended, never while it could still be answering
            assertThat(((java.sql.Timestamp) row.get("last_attempt_at")).toInstant())
                    .isAfterOrEqualTo(((java.sql.Timestamp) claimed.get("next_attempt_at")).toInstant());
            assertThat(got.get(1).nanos()).isGreaterThan(restarted);
            assertThat(row.get("attempts")).isEqualTo(2);
            assertThat(row.get("last_status")).isEqualTo(200);
        }
    }

    private Process startWorker(WebhookDatabase db, String name) throws IOException {
        Path dir = Files.createDirectories(Path.of("target", "webhook-crash"));
        Path out = dir.resolve(name + ".out");
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx96m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                DeliveryWorkerMain.class.getName(),
                TestPostgres.jdbcUrl(),
                db.schema());
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        processes.add(process);
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("the worker process exited: " + Files.readString(out));
                    }
                    return Files.readString(out).contains("ready");
                });
        return process;
    }
}
