package dev.exactly.benchmarks.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.Ci;
import dev.exactly.testing.SystemProperties;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the payments benchmark for a few seconds against the service's jar and checks correctness only:
 * every answer passed, and the books agree (one charge, one capture, one journal entry, balanced); and
 * that the books' checks do catch books that disagree, or a load on one customer. Never speed.
 */
class PaymentsBenchmarkSmokeTest {
    /** The service's {@code exactly.payments.commit-batch.max-charges} by default. */
    private static final long DEFAULT_BATCH_CHARGES = 7;

    @Test
    void aSettingThatDoesNotReadIsRefusedNotReplacedByItsDefault() {
        SystemProperties.with(
                "exactly.bench.seconds",
                "1m",
                () -> assertThatThrownBy(PaymentsBenchmark.Settings::fromSystemProperties)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("-Dexactly.bench.seconds=1m is not a whole number"));
        SystemProperties.with(
                "exactly.bench.connections",
                "1",
                () -> assertThatThrownBy(PaymentsBenchmark.Settings::fromSystemProperties)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("connections (1) and pgbenchClients (16) at least threads"));
    }

    @Test
    void aRecordingPathThatCannotBeWrittenIsRefusedBeforeAnyLoad(@TempDir Path dir) throws Exception {
        Path jar = Files.writeString(dir.resolve("service.jar"), ""); // the jar's own check passes; nothing starts
        Path notADirectory = Files.writeString(dir.resolve("a-file"), "");
        for (Path jfr : List.of(notADirectory.resolve("charges.jfr"), dir)) {
            PaymentsBenchmark.Settings settings = new PaymentsBenchmark.Settings(
                    2,
                    8,
                    Duration.ZERO,
                    0,
                    Duration.ofSeconds(3),
                    50,
                    Duration.ZERO,
                    4,
                    jar,
                    List.of(),
                    jfr,
                    List.of());
            ByteArrayOutputStream progress = new ByteArrayOutputStream();

            assertThatThrownBy(() ->
                            PaymentsBenchmark.run(settings, new PrintStream(progress, true, StandardCharsets.UTF_8)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("-Dexactly.bench.jfr=" + jfr)
                    .hasMessageContaining(jfr.equals(dir) ? "is a directory" : "cannot create its directory");
            assertThat(progress.toString(StandardCharsets.UTF_8))
                    .as("nothing started before the refusal")
                    .isEmpty();
        }
        // a recording in a directory that does not exist yet is fine: the directory is made
        Path nested = dir.resolve("recordings/today/charges.jfr");
        PaymentsBenchmark.prepareRecordingPath(nested);
        assertThat(nested.getParent()).isDirectory();
        // an earlier recording at the path goes, so that a file found there after the run is the run's own
        Files.writeString(nested, "an earlier run's recording");
        PaymentsBenchmark.prepareRecordingPath(nested);
        assertThat(nested).doesNotExist();
    }

    @Test
    void everyChargeIsAnsweredCapturedAndJournaledOnce(@TempDir Path dir) throws Exception {
        if (ChargesWrk.onPath().isEmpty()) {
            if (Ci.strict()) {
                throw new IllegalStateException(
                        "wrk is not on the PATH, and CI=true requires the payments benchmark smoke run");
            }
            Assumptions.abort("wrk is not on the PATH (apt-get install -y wrk)");
        }
        Path jar = Path.of(System.getProperty("exactly.repo.root", ".."))
                .resolve("payments-service/target/payments-service.jar");
        assertThat(jar).as("the reactor builds payments-service first").isRegularFile();
        // pgbench is the speed reference only: the smoke run exercises it when it is there
        Duration pgbench = PgBench.installed().isPresent() ? Duration.ofSeconds(1) : Duration.ZERO;
        // the flight recording asked for, in a directory not there yet
        Path recording = dir.resolve("recordings").resolve("charges.jfr");
        PaymentsBenchmark.Settings settings = new PaymentsBenchmark.Settings(
                2,
                8,
                Duration.ZERO,
                0,
                Duration.ofSeconds(3),
                50,
                pgbench,
                4,
                jar,
                List.of("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
                recording,
                List.of());

        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        PaymentsBenchmark.Result result =
                PaymentsBenchmark.run(settings, new PrintStream(progress, true, StandardCharsets.UTF_8));

        assertThat(result.problems())
                .as(progress.toString(StandardCharsets.UTF_8))
                .isEmpty();
        assertThat(progress.toString(StandardCharsets.UTF_8))
                .contains("flight recording of the measured phase: " + recording);
        assertThat(jdk.jfr.consumer.RecordingFile.readAllEvents(recording))
                .as("the service's recording of the phase")
                .anyMatch(event -> event.getEventType().getName().equals("jdk.ExecutionSample")
                        || event.getEventType().getName().equals("jdk.CPUTimeSample"));
        Books books = result.books();
        assertThat(result.measured().good()).isPositive();
        assertThat(books.succeeded())
                .isEqualTo(books.captures())
                .isEqualTo(books.chargeEntries())
                .isBetween(result.measured().good() + 1, result.measured().good() + 1 + settings.connections());
        assertThat(books.trialBalance()).containsOnlyKeys("USD");
        assertThat(books.trialBalance().get("USD")).containsExactly(books.chargedAmount(), books.chargedAmount());
        if (!pgbench.isZero()) {
            assertThat(result.pgbench()).hasSize(2).allMatch(tps -> tps > 0);
        }
        // a charge commits twice at least (phase 1 before the processor call, phase 3 after it), each time in a
        // round trip it shares with at most six other charges (the service's default commit batch: seven charges
        // at most; charges that arrive together commit together); it claims and completes its hot record, two
        // commands that leave in writes they share with the commands of other charges waiting for the Redis
        // client's event loop at the same time (at most one per charge in flight, one per connection); it
        // calls the processor once
        RoundTrips roundTrips = result.roundTrips();
        assertThat(roundTrips).as("the socket writes were recorded").isNotNull();
        assertThat(roundTrips.postgres())
                .isGreaterThanOrEqualTo(2 * result.measured().good() / DEFAULT_BATCH_CHARGES);
        assertThat(roundTrips.redis())
                .isGreaterThanOrEqualTo(2 * result.measured().good() / settings.connections());
        assertThat(roundTrips.processor())
                .isGreaterThanOrEqualTo(result.measured().good());
        // the service's CPU and the part of it its JIT compiler threads used (on Linux, where /proc has them)
        if (result.cpuMillis() >= 0) {
            assertThat(result.compilerMillis()).isBetween(0L, result.cpuMillis());
            // and where the machine's time went: the charges kept the database server busy, the machine was
            // busy at least as long as the database server (the service's part is counted in its JVM)
            PaymentsBenchmark.MachineTime machine = result.machine();
            assertThat(machine).as("/proc shows the machine").isNotNull();
            assertThat(machine.postgresMicros()).isPositive();
            assertThat(machine.wrkMicros())
                    .as("wrk, a child that ended within the phase")
                    .isPositive();
            assertThat(machine.busyMicros()).isGreaterThanOrEqualTo(machine.postgresMicros() + machine.redisMicros());
            assertThat(machine.busyShare()).isBetween(0.0, 1.0);
        }
        // what the charges wrote to the WAL: each commits, so at least a record per charge, some bytes each
        WalStats wal = result.wal();
        assertThat(wal).as("pg_stat_wal of PostgreSQL 14 and later").isNotNull();
        assertThat(wal.records()).isGreaterThanOrEqualTo(result.measured().good());
        assertThat(wal.bytes()).isGreaterThan(wal.records());
        assertThat(wal.fullPages()).isBetween(0L, wal.records());
        assertThat(wal.checkpoints()).isNotNegative();
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        result.print(new PrintStream(text, true, StandardCharsets.UTF_8));
        assertThat(text.toString(StandardCharsets.UTF_8))
                .contains(
                        "charges/s",
                        "p99",
                        "socket writes per charge",
                        "KB per charge",
                        "full-page images per charge",
                        result.cpuMillis() >= 0 ? "machine CPU" : "charges/s",
                        "every answer passed");
    }

    @Test
    void theBooksChecksCatchADoubleCaptureALostEntryAnUnbalancedLedgerAMissingChargeAndOneCustomer() {
        Map<String, long[]> balanced = Map.of("USD", new long[] {3 * 1999, 3 * 1999});
        assertThat(new Books(3, 3, 0, 3 * 1999, 3, 3, 3, balanced).problems(3, 0, 3))
                .isEmpty();

        assertThat(new Books(3, 3, 0, 3 * 1999, 3, 3, 4, balanced).problems(3, 0, 3))
                .singleElement()
                .asString()
                .contains("4 processor captures");
        assertThat(new Books(3, 3, 0, 3 * 1999, 2, 2, 3, balanced).problems(3, 0, 3))
                .anyMatch(p -> p.contains("2 charge journal entries"));
        assertThat(new Books(3, 3, 0, 3 * 1999, 3, 3, 3, Map.of("USD", new long[] {3 * 1999, 2 * 1999}))
                        .problems(3, 0, 3))
                .anyMatch(p -> p.contains("trial balance of USD off"));
        assertThat(new Books(3, 3, 0, 3 * 1999, 3, 3, 3, balanced).problems(4, 0, 3))
                .singleElement()
                .asString()
                .contains("3 succeeded charges for 4 good answers");
        assertThat(new Books(3, 3, 1, 3 * 1999, 3, 3, 3, balanced).problems(3, 0, 3))
                .singleElement()
                .asString()
                .contains("not succeeded");
        // a load generator that sends every charge to one customer serialises them on its balance row
        assertThat(new Books(12, 1, 0, 12 * 1999, 12, 12, 12, Map.of("USD", new long[] {12 * 1999, 12 * 1999}))
                        .problems(12, 0, 3))
                .singleElement()
                .asString()
                .contains("12 charges went to 1 customers, not to all 3");
    }
}
