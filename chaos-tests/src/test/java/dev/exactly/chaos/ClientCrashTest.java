package dev.exactly.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.client.intent.FileKeyJournal;
import dev.exactly.idempotency.client.intent.IntentId;
import dev.exactly.idempotency.client.intent.JournalEntry;
import dev.exactly.psp.Capture;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The Java client survives its own crash: a client in a child JVM ({@link PaymentClientMain}, the test
 * class path) pays an order with a journaled key and is killed with {@code kill -9} after its request
 * reached the payment service and before the answer came (the processor is slowed to 3 s, so the window
 * is wide, and the test checks it was hit: the service holds the key's durable record
 * {@code PROCESSING} and the client printed no answer). A second child with the same arguments resumes
 * the order from the file journal: the same key, the same bytes, and the service's answer is a replay.
 * The service shows one charge, one journal entry and one capture at the processor per order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientCrashTest {
    private static final int ORDERS = 3;
    private static final Duration SLOW_PROCESSOR = Duration.ofSeconds(3);
    private static final String CHARGES_OF_SCOPE = """
            SELECT id, status, downstream_key FROM payments_charge WHERE scope_key = ?
            """;
    private static final String ENTRIES_OF_CHARGE = """
            SELECT count(*) FROM ledger_entry WHERE external_ref = ?
            """;

    private @Nullable Topology topology;

    @BeforeAll
    void start() {
        // one instance; its durable lease outlives the slow processor call, so the killed client's request
        // finishes on its own and the resumed one is answered with its recorded answer
        Topology.Settings settings =
                new Topology.Settings(1, Duration.ofSeconds(10), Duration.ofMillis(250), Duration.ofSeconds(8), 4);
        topology = Topology.start(
                "client-crash",
                settings,
                dir -> ChaosDatabase.sharedSchema("chaos_client_crash"),
                dir -> Processor.startProcess(dir.resolve("psp.log")),
                LoadGenerator.Settings.defaults());
    }

    @AfterAll
    void stop() {
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void aClientKilledBetweenRequestAndAnswerResumesWithTheSameKeyAndChargesOnce() throws Exception {
        Topology t = topology();
        Path journal = t.directory().resolve("client-journal");
        ServiceInstance service = t.instance(0);
        t.processor().setFaults("{\"latency_ms\":" + SLOW_PROCESSOR.toMillis() + "}");
        int hits = 0;
        List<String> report = new ArrayList<>();
        try {
            for (int i = 1; i <= ORDERS; i++) {
                String order = "order-" + i;
                String[] args = {
                    service.baseUri().toString(),
                    Topology.API_KEY,
                    journal.toString(),
                    order,
                    Long.toString(1000L + i),
                    "cus_crash_" + i
                };

                // 1. the first client sends, and is killed while the service works on its request
                Path firstOut = t.directory().resolve("client-" + order + "-1.out");
                Process first = startClient(args, firstOut);
                String key;
                boolean inWindow;
                try {
                    await("the first attempt of " + order)
                            .atMost(Duration.ofSeconds(60))
                            .pollInterval(Duration.ofMillis(20))
                            .until(() -> !lines(firstOut, "attempt ").isEmpty() || !first.isAlive());
                    assertThat(first.isAlive())
                            .as("client 1 of %s is running:%n%s", order, Files.readString(firstOut))
                            .isTrue();
                    key = field(lines(firstOut, "attempt ").getFirst(), 2);
                    await("the service works on " + key)
                            .atMost(Duration.ofSeconds(30))
                            .pollInterval(Duration.ofMillis(20))
                            .until(() -> Faults.processingAmong(t, List.of(key)) > 0);
                    inWindow = first.isAlive() && lines(firstOut, "answer ").isEmpty();
                } finally {
                    first.destroyForcibly();
                    assertThat(first.waitFor(20, TimeUnit.SECONDS)).isTrue();
                }
                boolean stillProcessing = Faults.processingAmong(t, List.of(key)) > 0;
                boolean answered = !lines(firstOut, "answer ").isEmpty();
                if (inWindow && !answered) {
                    hits++;
                }
                List<String> firstAttempts = lines(firstOut, "attempt ");
                JournalEntry journaled = FileKeyJournal.open(journal)
                        .find(IntentId.of("checkout", order))
                        .orElseThrow();
                assertThat(journaled.key())
                        .as("the journal holds the key that went out")
                        .isEqualTo(key);
                assertThat(journaled.finished())
                        .as("no answer reached the killed client")
                        .isFalse();

                // 2. the client starts again with the same arguments and resumes the order from the journal
                Path secondOut = t.directory().resolve("client-" + order + "-2.out");
                Process second = startClient(args, secondOut);
                try {
                    assertThat(second.waitFor(90, TimeUnit.SECONDS))
                            .as("client 2 of %s finished", order)
                            .isTrue();
                } finally {
                    second.destroyForcibly();
                }
                assertThat(second.exitValue())
                        .as("client 2 of %s:%n%s", order, Files.readString(secondOut))
                        .isZero();
                List<String> secondAttempts = lines(secondOut, "attempt ");
                String answer = lines(secondOut, "answer ").getFirst();
                assertThat(secondAttempts).isNotEmpty().allSatisfy(line -> {
                    assertThat(field(line, 2)).as("the same key").isEqualTo(key);
                    assertThat(field(line, 3)).as("the same bytes").isEqualTo(field(firstAttempts.getFirst(), 3));
                });
                assertThat(field(answer, 1)).as(answer).isEqualTo("201");
                assertThat(field(answer, 2))
                        .as("a replay of the first request's charge: %s", answer)
                        .isEqualTo("true");
                assertThat(field(answer, 4)).isEqualTo(key);

                // 3. the service charged once, journaled once, and the processor captured once
                Charge charge = chargeOf(t, key);
                assertThat(charge.status()).isEqualTo("succeeded");
                assertThat(answer).contains("\"id\":\"" + charge.id() + "\"");
                assertThat(entriesOf(t, charge.id())).isEqualTo(1);
                List<Capture> captures = t.processor().captures().stream()
                        .filter(c -> c.idempotencyKey().equals(charge.downstreamKey()))
                        .toList();
                assertThat(captures)
                        .as("captures of %s", charge.downstreamKey())
                        .hasSize(1);
                assertThat(FileKeyJournal.open(journal)
                                .find(IntentId.of("checkout", order))
                                .orElseThrow()
                                .finalStatus())
                        .isEqualTo(201);
                report.add(order + ": key " + key + ", killed " + (inWindow ? "in the window" : "OUTSIDE the window")
                        + (stillProcessing ? " (record still PROCESSING after the kill)" : "") + ", resumed in "
                        + secondAttempts.size() + " attempt(s), one charge " + charge.id() + ", one capture");
            }
        } finally {
            t.processor().clearFaults();
            report.forEach(System.out::println);
        }
        assertThat(hits).as("kills between request and answer: %s", report).isEqualTo(ORDERS);
    }

    private static Process startClient(String[] args, Path out) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Workspace.java().toString(),
                "-Xmx64m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                PaymentClientMain.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
    }

    /** The complete lines of {@code file} that start with {@code prefix}. */
    private static List<String> lines(Path file, String prefix) {
        try {
            if (!Files.exists(file)) {
                return List.of();
            }
            String text = Files.readString(file);
            List<String> out = new ArrayList<>();
            int start = 0;
            for (int nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
                String line = text.substring(start, nl);
                if (line.startsWith(prefix)) {
                    out.add(line);
                }
                start = nl + 1;
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String field(String line, int index) {
        return line.split(" ", index + 2)[index];
    }

    private record Charge(String id, String status, String downstreamKey) {}

    private static Charge chargeOf(Topology t, String key) throws SQLException {
        String scope = new Payment(key, 1, "", false, new byte[0]).scopeHash(Topology.TENANT);
        try (Connection c = t.database().dataSource().getConnection();
                PreparedStatement s = c.prepareStatement(CHARGES_OF_SCOPE)) {
            s.setString(1, scope);
            try (ResultSet rs = s.executeQuery()) {
                List<Charge> charges = new ArrayList<>();
                while (rs.next()) {
                    charges.add(new Charge(rs.getString("id"), rs.getString("status"), rs.getString("downstream_key")));
                }
                assertThat(charges).as("charges of key %s", key).hasSize(1);
                return charges.getFirst();
            }
        }
    }

    private static long entriesOf(Topology t, String chargeId) throws SQLException {
        try (Connection c = t.database().dataSource().getConnection();
                PreparedStatement s = c.prepareStatement(ENTRIES_OF_CHARGE)) {
            s.setString(1, "charge:" + chargeId);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private Topology topology() {
        if (topology == null) {
            throw new IllegalStateException("not started");
        }
        return topology;
    }
}
