package dev.exactly.examples.plain;

import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseResumer;
import dev.exactly.idempotency.postgres.PhaseStart;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A second use of the transactional API, far from payments: book a shipment at a carrier exactly once per
 * request. The shipment row and the key's claim commit together; the carrier call runs between two
 * transactions under a lease kept alive; the label and the final answer commit together, fenced. A crash
 * anywhere is resumed by recovery from the last checkpoint (this class is also the {@link PhaseResumer}),
 * and the carrier, asked first, is never asked to book twice.
 */
public final class ShipmentService implements PhaseResumer {

    /** The carrier: books a shipment under the id we give it, and tells what it booked under an id. */
    public interface Carrier {
        String book(String shipmentId);

        Optional<String> find(String shipmentId);
    }

    private final DataSource db;
    private final AtomicPhases phases;
    private final Carrier carrier;

    public ShipmentService(DataSource db, AtomicPhases phases, Carrier carrier) {
        this.db = db;
        this.phases = phases;
        this.carrier = carrier;
    }

    public StoredResponse ship(IdempotencyRequest request, String orderId) throws Exception {
        Phase phase;
        try (Connection c = transaction()) { // 1: the claim, the shipment row and a checkpoint commit together
            switch (phases.begin(c, request)) {
                case PhaseStart.Owned owned -> phase = owned.phase();
                case PhaseStart.Replay replay -> {
                    return replay.response();
                }
                case PhaseStart.InFlight inFlight -> {
                    return answer(409, "\"in progress\"");
                }
                case PhaseStart.DeadLettered dead -> {
                    return answer(409, "\"an operator will resolve it\"");
                }
                case PhaseStart.KeyReused reused -> {
                    return answer(422, "\"key used for another request\"");
                }
            }
            if (!phase.resumed()) {
                write(c, "INSERT INTO shipments (id, order_id) VALUES (?, ?)", shipmentId(phase), orderId);
                phases.checkpoint(c, phase, Checkpoint.of("shipment_created"));
            }
            c.commit();
        }
        return book(phase);
    }

    /** Recovery hands back a phase whose owner went away: carry on from its checkpoint. */
    @Override
    public void resume(Phase phase) throws Exception {
        book(phase);
    }

    private StoredResponse book(Phase phase) throws SQLException {
        String id = shipmentId(phase);
        String label;
        try (LeaseKeeper alive = phases.keepAlive(phase)) { // 2: the carrier, asked first, between transactions
            label = carrier.find(id).orElseGet(() -> carrier.book(id));
        }
        StoredResponse answer = answer(201, "{\"shipment\":\"" + id + "\",\"label\":\"" + label + "\"}");
        try (Connection c = transaction()) { // 3: the label and the answer, fenced by the owner token
            write(c, "UPDATE shipments SET label = ? WHERE id = ?", label, id);
            if (!phases.finish(c, phase, RecordStatus.COMPLETED, answer)) {
                c.rollback(); // another owner took over: its answer, not ours, is the one
                throw new IllegalStateException("shipment " + id + " was taken over by another owner");
            }
            c.commit();
        }
        return answer;
    }

    /** The same id for every owner of the request: derived from its key. */
    static String shipmentId(Phase phase) {
        return "shp_" + phase.key().hash().substring(0, 24);
    }

    private Connection transaction() throws SQLException {
        Connection c = db.getConnection();
        c.setAutoCommit(false);
        return c;
    }

    private static void write(Connection c, String sql, String first, String second) throws SQLException {
        try (PreparedStatement statement = c.prepareStatement(sql)) {
            statement.setString(1, first);
            statement.setString(2, second);
            statement.executeUpdate();
        }
    }

    private static StoredResponse answer(int status, String json) {
        return new StoredResponse(
                status, Map.of("content-type", List.of("application/json")), json.getBytes(StandardCharsets.UTF_8));
    }
}
