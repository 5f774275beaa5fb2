package dev.exactly.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcessCpuTest {
    @Test
    void readsTheNameAndUserAndSystemTicksOfAProcess() {
        String backend = "4242 (postgres) S 1 4242 4242 0 -1 4194560 712 0 0 0 37 5 0 0 20 0 1 0 99 225 3 1 2 3";
        assertThat(ProcessCpu.parse(backend)).isEqualTo(new ProcessCpu.Sample("postgres", 42));
        // a name with a space and a parenthesis of its own: fields are counted after the last ')'
        String spaced = "7 (post gres) ) R 1 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 9 2 3";
        assertThat(ProcessCpu.parse(spaced)).isEqualTo(new ProcessCpu.Sample("post gres) ", 2));
        assertThatThrownBy(() -> ProcessCpu.parse("no parentheses")).isInstanceOf(IllegalArgumentException.class);
        // cutime and cstime: the ticks of the children it waited for
        assertThat(ProcessCpu.endedChildrenTicks(backend)).isEqualTo(0);
        assertThat(ProcessCpu.endedChildrenTicks("9 (java) S 1 9 9 0 -1 0 0 0 0 0 37 5 60 7 20 0 1 0 99"))
                .isEqualTo(67);
    }

    @Test
    void countsAChildThatRanAndEndedBetweenTwoSnapshots() throws Exception {
        ProcessCpu.Snapshot before = ProcessCpu.snapshot().orElseThrow();
        // a child that burns some CPU (more than a 10 ms tick) and exits before the second snapshot
        Process child = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
                .redirectErrorStream(true)
                .start();
        assertThat(child.waitFor()).isZero();
        ProcessCpu.Snapshot after = ProcessCpu.snapshot().orElseThrow();
        assertThat(ProcessCpu.endedChildrenMicros(before, after)).isGreaterThanOrEqualTo(10_000);
        assertThat(ProcessCpu.micros(before, after, "sh"))
                .as("an ended process is gone from the processes")
                .isZero();
    }

    @Test
    void readsTheMachinesBusyAndTotalTicks() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        String stat = "cpu  100 5 20 1000 7 3 2 1 50 0\ncpu0 50 2 10 500 3 1 1 0 25 0\n";
        assertThat(ProcessCpu.machineTicks(stat)).containsExactly(100 + 5 + 20 + 3 + 2 + 1, 1138);
        assertThatThrownBy(() -> ProcessCpu.machineTicks("intr 1 2 3\n")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void seesTheWorkOfTheLocalDatabaseServerAndOfTheMachine() throws Exception {
        try (Connection connection = TestPostgres.dataSource().getConnection();
                Statement statement = connection.createStatement()) {
            long backend;
            try (ResultSet pid = statement.executeQuery("SELECT pg_backend_pid()")) {
                assertThat(pid.next()).isTrue();
                backend = pid.getLong(1);
            }
            // read while the backend lives: one that exits takes its time along
            ProcessCpu.Snapshot before = ProcessCpu.snapshot()
                    .orElseThrow(() -> new AssertionError("this machine shows its processes in /proc"));
            assertThat(before.processes()).containsKey(backend);
            try (ResultSet sum = statement.executeQuery("SELECT sum(g) FROM generate_series(1, 5000000) g")) {
                assertThat(sum.next()).isTrue();
            }
            ProcessCpu.Snapshot after = ProcessCpu.snapshot().orElseThrow();
            // summing five million integers costs a backend far more than the 10 ms a clock tick counts
            assertThat(after.processes().get(backend).ticks()
                            - before.processes().get(backend).ticks())
                    .isGreaterThanOrEqualTo(10);
            assertThat(ProcessCpu.micros(before, after, "postgres")).isGreaterThanOrEqualTo(100_000);
            assertThat(ProcessCpu.machineBusyMicros(before, after)).isGreaterThanOrEqualTo(100_000);
            assertThat(ProcessCpu.machineBusyShare(before, after))
                    .isGreaterThan(0)
                    .isLessThanOrEqualTo(1);
        }
    }

    @Test
    void aProcessThatExitsCountsNothingAndANewOneAllItUsed() {
        var before = new ProcessCpu.Snapshot(
                Map.of(
                        1L, new ProcessCpu.Sample("postgres", 500),
                        2L, new ProcessCpu.Sample("postgres", 70),
                        5L, new ProcessCpu.Sample("bash", 900)),
                0,
                0,
                0);
        var after = new ProcessCpu.Snapshot(
                Map.of(
                        1L, new ProcessCpu.Sample("postgres", 530), // 2 exited
                        3L, new ProcessCpu.Sample("postgres", 4), // started
                        4L, new ProcessCpu.Sample("redis-server", 8),
                        5L, new ProcessCpu.Sample("postgres", 6)),
                0,
                0,
                0); // pid 5 reused by a new backend
        assertThat(ProcessCpu.micros(before, after, "postgres")).isEqualTo((30 + 4 + 6) * 10_000L);
        assertThat(ProcessCpu.micros(before, after, "redis-server")).isEqualTo(8 * 10_000L);
        assertThat(ProcessCpu.micros(before, after, "wrk")).isZero();
    }
}
