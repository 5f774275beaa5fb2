package dev.exactly.ledger;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * An entry's write as one SQL statement ({@link Ledger#preparePost}, {@link Ledger#prepareHold}), for a
 * caller that sends it together with its own statements in one round trip (several statements in one
 * prepared statement, which pgjdbc sends with a single Sync). It writes what {@link Ledger#post} or
 * {@link Ledger#hold} would, with the same guarantees, in the caller's transaction; the request was
 * validated against its accounts when it was prepared.
 */
public interface EntryWrite {

    /** The statement (one, without a trailing semicolon). */
    String sql();

    /**
     * Binds the statement's parameters from index {@code first} on.
     *
     * @return the index after its last parameter
     */
    int bind(PreparedStatement statement, int first) throws SQLException;

    /**
     * Whether a balance floor could refuse the write: it lowers (available balance less held decreases) an
     * unsharded account, which the statement refuses below the account's floor, leaving the caller to roll
     * back. False: the statement writes the entry or, when its reference holds one already, nothing.
     */
    boolean mayBeRefused();

    /**
     * The entry, read from the statement's result (the statement positioned on it): the new one, or the
     * existing one with the same reference (then read on the statement's connection, in the caller's
     * transaction, which must still be open).
     *
     * @throws LedgerConflictException when the reference belongs to an entry that differs
     * @throws BalanceFloorException when an account would go below its floor (roll back)
     */
    JournalEntry result(Statement statement) throws SQLException;
}
