package dev.exactly.idempotency.postgres;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A fenced write of a phase ({@link AtomicPhases#checkpointing}, {@link AtomicPhases#finishing}) as one SQL
 * statement, for a caller that sends it together with its own statements in one round trip (several
 * statements in one prepared statement, which pgjdbc sends with a single Sync). It does what
 * {@link AtomicPhases#checkpoint} or {@link AtomicPhases#finish} do, in the caller's transaction; the caller
 * reads whether it applied from its result, and rolls back when it did not.
 */
public interface PhaseWrite {

    /** The statement (one, without a trailing semicolon). */
    String sql();

    /**
     * Binds the statement's parameters from index {@code first} on.
     *
     * @return the index after its last parameter
     */
    int bind(PreparedStatement statement, int first) throws SQLException;

    /**
     * Whether the write applied, read from its result (the statement positioned on it).
     *
     * @return false when the caller no longer owns the phase: roll back
     */
    boolean applied(Statement statement) throws SQLException;
}
