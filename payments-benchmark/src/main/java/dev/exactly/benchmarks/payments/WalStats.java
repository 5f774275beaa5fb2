package dev.exactly.benchmarks.payments;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;

/**
 * What the PostgreSQL server wrote to its WAL, and how many checkpoints it started, counted server-wide
 * ({@code pg_stat_wal}, PostgreSQL 14 and later; the checkpoints from {@code pg_stat_checkpointer} on 17 and
 * later, else {@code pg_stat_bgwriter}). After each checkpoint the first change to every page writes the
 * whole page into the WAL (a full-page image): a phase that starts just after one writes several times
 * the bytes per charge of a phase that does not, and costs the database more CPU, so the figures tell a
 * run disturbed by a checkpoint from a slower build.
 *
 * @param records     WAL records
 * @param fullPages   full-page images among them
 * @param bytes       WAL bytes
 * @param checkpoints checkpoints started (timed and requested)
 */
record WalStats(long records, long fullPages, long bytes, long checkpoints) {

    /** The server's counters now, or empty where it has no {@code pg_stat_wal} (before 14). */
    static Optional<WalStats> read(String jdbcUrl) {
        try (Connection c = DriverManager.getConnection(jdbcUrl);
                Statement s = c.createStatement()) {
            long records;
            long fullPages;
            long bytes;
            try (ResultSet r = s.executeQuery("SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal")) {
                if (!r.next()) {
                    return Optional.empty();
                }
                records = r.getLong(1);
                fullPages = r.getLong(2);
                bytes = r.getLong(3);
            }
            String checkpoints = c.getMetaData().getDatabaseMajorVersion() >= 17
                    ? "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
                    : "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter";
            try (ResultSet r = s.executeQuery(checkpoints)) {
                r.next();
                return Optional.of(new WalStats(records, fullPages, bytes, r.getLong(1)));
            }
        } catch (SQLException e) {
            return Optional.empty();
        }
    }

    /** The counts from {@code before} to this. */
    WalStats since(WalStats before) {
        return new WalStats(
                records - before.records,
                fullPages - before.fullPages,
                bytes - before.bytes,
                checkpoints - before.checkpoints);
    }

    /** One line of the report: per charge, and the checkpoints started. */
    String perCharge(long charges) {
        return String.format(
                "%.1f KB per charge, %.2f full-page images per charge (%.0f %% of the records), "
                        + "%d checkpoint%s started during the phase",
                bytes / 1024.0 / charges,
                (double) fullPages / charges,
                records == 0 ? 0.0 : 100.0 * fullPages / records,
                checkpoints,
                checkpoints == 1 ? "" : "s");
    }
}
