package dev.exactly.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class PostgresCpuTest {
    @Test
    void readsUserAndSystemTicksOfAPostgresProcessOnly() {
        String backend = "4242 (postgres) S 1 4242 4242 0 -1 4194560 712 0 0 0 37 5 0 0 20 0 1 0 99 225 3 1 2 3";
        assertThat(PostgresCpu.parse(backend)).isEqualTo(42);
        String other = "4243 (redis-server) S 1 4243 4243 0 -1 4194560 712 0 0 0 37 5 0 0 20 0 1 0 99 225 3 1 2 3";
        assertThat(PostgresCpu.parse(other)).isEqualTo(-1);
        // a name with a space and a parenthesis of its own: fields are counted after the last ')'
        String spaced = "7 (post gres) ) R 1 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 9 2 3";
        assertThat(PostgresCpu.parse(spaced)).isEqualTo(-1);
    }

    @Test
    void seesTheWorkOfTheLocalServer() throws Exception {
        OptionalLong before = PostgresCpu.micros();
        assertThat(before).as("the test database runs on this machine").isPresent();
        try (Connection connection = TestPostgres.dataSource().getConnection();
                Statement statement = connection.createStatement();
                ResultSet sum = statement.executeQuery("SELECT sum(g) FROM generate_series(1, 5000000) g")) {
            assertThat(sum.next()).isTrue();
        }
        // summing five million integers costs a backend far more than the 10 ms a clock tick counts
        assertThat(PostgresCpu.micros().getAsLong() - before.getAsLong()).isGreaterThanOrEqualTo(100_000);
    }
}
