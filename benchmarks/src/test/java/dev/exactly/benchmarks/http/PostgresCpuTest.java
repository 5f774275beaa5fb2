package dev.exactly.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
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
        try (Connection connection = TestPostgres.dataSource().getConnection();
                Statement statement = connection.createStatement()) {
            long backend;
            try (ResultSet pid = statement.executeQuery("SELECT pg_backend_pid()")) {
                assertThat(pid.next()).isTrue();
                backend = pid.getLong(1);
            }
            // read while the backend lives: one that exits takes its time along
            Map<Long, Long> before = PostgresCpu.snapshot().orElseThrow(
                    () -> new AssertionError("the test database runs on this machine"));
            assertThat(before).containsKey(backend);
            try (ResultSet sum = statement.executeQuery("SELECT sum(g) FROM generate_series(1, 5000000) g")) {
                assertThat(sum.next()).isTrue();
            }
            Map<Long, Long> after = PostgresCpu.snapshot().orElseThrow();
            // summing five million integers costs a backend far more than the 10 ms a clock tick counts
            assertThat(after.get(backend) - before.get(backend)).isGreaterThanOrEqualTo(10);
            assertThat(PostgresCpu.microsBetween(before, after)).isGreaterThanOrEqualTo(100_000);
        }
    }

    @Test
    void aProcessThatExitsCountsNothingAndANewOneAllItUsed() {
        Map<Long, Long> before = Map.of(1L, 500L, 2L, 70L);
        Map<Long, Long> after = Map.of(1L, 530L, 3L, 4L); // 2 exited, 3 started
        assertThat(PostgresCpu.microsBetween(before, after)).isEqualTo((30 + 4) * 10_000L);
    }
}
