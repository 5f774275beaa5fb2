package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseRecord;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.idempotency.postgres.Retry;
import java.sql.Connection;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link AtomicPhases} inside Spring-managed transactions: every call joins the transaction of the
 * current thread ({@code @Transactional}, {@code TransactionTemplate}) on the connection its transaction
 * manager bound, so a phase's claim, checkpoints and answer commit or roll back with the service's own
 * writes ({@code JdbcTemplate}, JPA on the same {@code DataSource}) with no JDBC plumbing:
 *
 * <pre>{@code
 * @Transactional
 * public Answer book(IdempotencyRequest request, Order order) {
 *     if (!(phases.begin(request) instanceof PhaseStart.Owned owned)) { ... replay, in flight, reused ... }
 *     jdbc.update("INSERT INTO shipments ...");
 *     phases.checkpoint(owned.phase(), Checkpoint.of("shipment_created"));
 *     ...
 * }
 * }</pre>
 *
 * Calls outside a transaction are refused ({@link IllegalStateException}): a claim that commits on its
 * own would defeat the purpose. The lease keep-alive and reads need no transaction.
 */
public final class TransactionalPhases {
    private final AtomicPhases phases;
    private final DataSource dataSource;

    public TransactionalPhases(AtomicPhases phases, DataSource dataSource) {
        this.phases = Objects.requireNonNull(phases, "phases");
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** The connection-level API, for work outside Spring's transactions. */
    public AtomicPhases phases() {
        return phases;
    }

    /** {@link AtomicPhases#begin} in the current transaction. */
    public PhaseStart begin(IdempotencyRequest request) {
        return inTransaction("begin", c -> phases.begin(c, request));
    }

    /** {@link AtomicPhases#checkpoint} in the current transaction; false: roll back. */
    public boolean checkpoint(Phase phase, Checkpoint next) {
        return inTransaction("checkpoint", c -> phases.checkpoint(c, phase, next));
    }

    /** {@link AtomicPhases#finish} in the current transaction; false: roll back. */
    public boolean finish(Phase phase, RecordStatus status, StoredResponse response) {
        return inTransaction("finish", c -> phases.finish(c, phase, status, response));
    }

    /** {@link AtomicPhases#release} in the current transaction. */
    public boolean release(Phase phase) {
        return inTransaction("release", c -> phases.release(c, phase));
    }

    /** {@link AtomicPhases#retryLater} in the current transaction. */
    public Retry retryLater(Phase phase, String error) {
        return inTransaction("retryLater", c -> phases.retryLater(c, phase, error));
    }

    /** {@link AtomicPhases#keepAlive}: between transactions, around a slow remote step. */
    public LeaseKeeper keepAlive(Phase phase) {
        return phases.keepAlive(phase);
    }

    /** The phase record of a key (in the current transaction if there is one). */
    public Optional<PhaseRecord> find(ScopeKey key) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return phases.find(key);
        }
        return inTransaction("find", c -> phases.find(c, key));
    }

    private <T> T inTransaction(String operation, Function<Connection, T> work) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("TransactionalPhases." + operation + " must run inside a transaction "
                    + "(@Transactional or TransactionTemplate), so that it commits with the service's own writes");
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            return work.apply(connection);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
