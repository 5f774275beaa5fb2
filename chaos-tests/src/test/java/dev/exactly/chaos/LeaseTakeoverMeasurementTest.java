package dev.exactly.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.chaos.LeaseOwnerProcess.Backend;
import dev.exactly.chaos.LeaseOwnerProcess.Place;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Time from {@code kill -9} of an owner process to the takeover of its key by another process, before
 * the keep-alive (the old default: a 30 s lease, not renewed) and after it (the new default: a 10 s lease
 * renewed every third), on Redis and on PostgreSQL. Each owner is killed at one of five ages (0.5 s to
 * 4.9 s after its claim, the life of a request in flight), five owners at a time. Not part of the normal
 * run (tag {@code measurement}):
 *
 * <pre>
 * ./mvnw -B -ntp -pl chaos-tests -am verify -Dtest=LeaseTakeoverMeasurementTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dgroups=measurement -DexcludedGroups=
 * </pre>
 *
 * The table goes to standard output and to {@code chaos-tests/target/chaos/lease-measurement-<time>/takeover.md}.
 */
@Tag("measurement")
class LeaseTakeoverMeasurementTest {
    private static final Duration[] AGES = {
        Duration.ofMillis(500),
        Duration.ofMillis(1600),
        Duration.ofMillis(2700),
        Duration.ofMillis(3800),
        Duration.ofMillis(4900)
    };

    private record Setting(String name, Duration lease, boolean keepAlive) {}

    @Test
    void timeToTakeoverAfterKillNineBeforeAndAfterTheKeepAlive() throws Exception {
        Path directory = Workspace.runDirectory("lease-measurement");
        List<Setting> settings = List.of(
                new Setting("before: lease 30 s, no keep-alive", Duration.ofSeconds(30), false),
                new Setting("after: lease 10 s, keep-alive every 3.3 s", Duration.ofSeconds(10), true));
        List<String> table = new ArrayList<>();
        table.add("| setting | store | killed at (s after claim) | kill -9 → takeover (s) | min | median | max |");
        table.add("|---|---|---|---|---|---|---|");
        for (Setting setting : settings) {
            for (Backend backend : Backend.values()) {
                List<Duration> takeovers = measure(backend, setting, directory);
                List<Duration> sorted = takeovers.stream().sorted().toList();
                table.add("| " + setting.name() + " | " + backend.name().toLowerCase(Locale.ROOT) + " | "
                        + String.join(
                                ", ",
                                java.util.Arrays.stream(AGES)
                                        .map(LeaseTakeoverMeasurementTest::seconds)
                                        .toList())
                        + " | "
                        + String.join(
                                ", ",
                                takeovers.stream()
                                        .map(LeaseTakeoverMeasurementTest::seconds)
                                        .toList())
                        + " | " + seconds(sorted.getFirst()) + " | " + seconds(sorted.get(sorted.size() / 2)) + " | "
                        + seconds(sorted.getLast()) + " |");
                for (Duration takeover : takeovers) {
                    Duration bound = setting.keepAlive()
                            ? setting.lease().plus(KeepAlive.interval(setting.lease()))
                            : setting.lease();
                    assertThat(takeover).isLessThanOrEqualTo(bound);
                }
            }
        }
        String report = String.join("\n", table) + "\n";
        Files.writeString(directory.resolve("takeover.md"), report);
        System.out.println(report);
    }

    /** Five owners at once, each killed at its age; the takeover time of each, in the order of {@link #AGES}. */
    private static List<Duration> measure(Backend backend, Setting setting, Path directory) throws Exception {
        Place place = backend.open();
        ExecutorService pool = Executors.newFixedThreadPool(AGES.length);
        try {
            List<Future<Duration>> runs = new ArrayList<>();
            for (Duration age : AGES) {
                runs.add(pool.submit(() -> {
                    try (IdempotencyStore store = place.store();
                            LeaseOwnerProcess owner = LeaseOwnerProcess.start(
                                    place,
                                    directory,
                                    "measure-" + UUID.randomUUID(),
                                    setting.lease(),
                                    setting.keepAlive())) {
                        long killAt = owner.claimedNanos() + age.toNanos();
                        await().atMost(age.plusSeconds(5))
                                .pollInterval(Duration.ofMillis(2))
                                .until(() -> System.nanoTime() - killAt >= 0);
                        owner.kill();
                        long killed = System.nanoTime();
                        return owner.awaitTakeover(
                                store, killed, setting.lease().multipliedBy(2).plusSeconds(30));
                    }
                }));
            }
            List<Duration> takeovers = new ArrayList<>();
            for (Future<Duration> run : runs) {
                takeovers.add(run.get());
            }
            return takeovers;
        } finally {
            pool.shutdownNow();
        }
    }

    private static String seconds(Duration d) {
        return String.format(java.util.Locale.ROOT, "%.1f", d.toMillis() / 1000.0);
    }
}
