package dev.exactly.idempotency.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGResultSetMetaData;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@link Timestamps}: the instant of a {@code timestamptz} is the driver's, whether the server sent it as text or
 * in binary, before and after PostgreSQL's epoch, with microseconds, and for {@code ±infinity} and NULL.
 */
class TimestampsTest {
    private static final String VALUES = """
            SELECT v FROM unnest(ARRAY[
                '2026-12-02 05:49:35.123456+00', '2000-01-01 00:00:00+00', '1999-12-31 23:59:59.999999+00',
                '1970-01-01 00:00:00+00', '1969-07-20 20:17:40.000001+00', '2262-04-11 23:47:16.854775+00',
                '1900-01-01 00:00:00+00', 'infinity', '-infinity', NULL]::timestamptz[]) AS v
            WHERE ? = 1
            """;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyValueIsTheDriversInstant(boolean binary) throws SQLException {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(TestPostgres.jdbcUrl());
        // -1: prepared on the server at once, so results come in binary; 0: never, so they come as text
        dataSource.setPrepareThreshold(binary ? -1 : 0);
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement(VALUES)) {
            s.setInt(1, 1);
            List<Instant> ours = new ArrayList<>();
            List<Instant> drivers = new ArrayList<>();
            try (ResultSet rows = s.executeQuery()) {
                assertThat(rows.getMetaData().unwrap(PGResultSetMetaData.class).getFormat(1))
                        .isEqualTo(binary ? 1 : 0);
                while (rows.next()) {
                    ours.add(Timestamps.instant(rows, 1));
                    OffsetDateTime value = rows.getObject(1, OffsetDateTime.class);
                    drivers.add(value == null ? null : value.toInstant());
                }
            }
            assertThat(ours).hasSize(10).containsExactlyElementsOf(drivers);
            assertThat(ours.getFirst()).isEqualTo(Instant.parse("2026-12-02T05:49:35.123456Z"));
            assertThat(ours.get(4)).isEqualTo(Instant.parse("1969-07-20T20:17:40.000001Z"));
            assertThat(ours.getLast()).isNull();
        }
    }
}
