package dev.exactly.examples.plain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.PhaseRecovery;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.RecoveryPolicy;
import dev.exactly.testing.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The README's shipment example against a real PostgreSQL, with a carrier that loses an answer. */
class ShipmentServiceTest {
    private static final IdempotencyPolicy POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofMillis(500))
            .retention(Duration.ofHours(1))
            .keepAlive(KeepAlive.ofDefaults())
            .build();

    /** A carrier that books each shipment id once, and can lose its answer after booking (a dropped reply). */
    static final class TestCarrier implements ShipmentService.Carrier {
        final Map<String, String> labels = new ConcurrentHashMap<>();
        final AtomicInteger bookings = new AtomicInteger();
        final AtomicBoolean loseNextAnswer = new AtomicBoolean();

        @Override
        public String book(String shipmentId) {
            String label = labels.computeIfAbsent(shipmentId, id -> {
                bookings.incrementAndGet();
                return "LBL-" + bookings.get();
            });
            if (loseNextAnswer.getAndSet(false)) {
                throw new IllegalStateException("connection reset after the carrier booked " + shipmentId);
            }
            return label;
        }

        @Override
        public Optional<String> find(String shipmentId) {
            return Optional.ofNullable(labels.get(shipmentId));
        }
    }

    private DataSource db;
    private PostgresIdempotencyStore store;
    private AtomicPhases phases;
    private final TestCarrier carrier = new TestCarrier();
    private ShipmentService service;

    @BeforeEach
    void setUp() throws Exception {
        db = TestPostgres.freshSchema("shipments");
        PostgresIdempotencyStore.migrate(db);
        try (Connection c = db.getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE shipments (id text PRIMARY KEY, order_id text NOT NULL, label text)");
        }
        store = PostgresIdempotencyStore.create(db);
        phases = AtomicPhases.builder(store)
                .recoveryPolicy(RecoveryPolicy.custom()
                        .firstDelay(Duration.ofMillis(50))
                        .maxDelay(Duration.ofMillis(100))
                        .build())
                .build();
        service = new ShipmentService(db, phases, carrier);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private static IdempotencyRequest request(String order) {
        return IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/shipments", new IdempotencyKey("ship-" + order)),
                new Fingerprint("sha256-jcs", order),
                POLICY);
    }

    @Test
    void aShipmentIsBookedOnceAndItsAnswerReplayed() throws Exception {
        StoredResponse first = service.ship(request("o-1"), "o-1");
        assertThat(first.status()).isEqualTo(201);
        StoredResponse again = service.ship(request("o-1"), "o-1");
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(carrier.bookings).hasValue(1);
        assertThat(labels()).containsExactly("LBL-1");
    }

    @Test
    void aLostCarrierAnswerIsResumedByRecoveryWithoutASecondBooking() throws Exception {
        carrier.loseNextAnswer.set(true);
        assertThatThrownBy(() -> service.ship(request("o-2"), "o-2")).hasMessageContaining("connection reset");
        assertThat(carrier.bookings).as("the carrier did book").hasValue(1);
        assertThat(phases.find(request("o-2").key()).orElseThrow().checkpoint().name())
                .isEqualTo("shipment_created");

        try (PhaseRecovery recovery = phases.recovery(service, POLICY)) {
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        recovery.runOnce();
                        return phases.find(request("o-2").key()).orElseThrow().status() == RecordStatus.COMPLETED;
                    });
        }
        StoredResponse retry = service.ship(request("o-2"), "o-2");
        assertThat(new String(retry.body(), StandardCharsets.UTF_8)).contains("\"label\":\"LBL-1\"");
        assertThat(carrier.bookings)
                .as("asked first, the carrier was not asked to book again")
                .hasValue(1);
        assertThat(labels()).containsExactly("LBL-1");
    }

    private java.util.List<String> labels() throws Exception {
        java.util.List<String> labels = new java.util.ArrayList<>();
        try (Connection c = db.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT label FROM shipments")) {
            while (rs.next()) {
                labels.add(rs.getString(1));
            }
        }
        return labels;
    }
}
