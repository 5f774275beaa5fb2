package dev.exactly.ledger.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import org.junit.jupiter.api.Test;

/** The throughput benchmark in miniature: checks only that the run leaves a correct ledger, not speed. */
class LedgerThroughputSmokeTest {

    @Test
    void aShortRunLeavesEveryChargeJournaledAndTheLedgerBalanced() throws Exception {
        LedgerThroughputBenchmark.Report report = LedgerThroughputBenchmark.run(
                TestPostgres.freshSchema("ledger_bench_smoke"), LedgerThroughputBenchmark.Config.smoke());

        assertThat(report.hot().transactions()).isPositive();
        assertThat(report.spread().transactions()).isPositive();
        assertThat(report.commitBaseline().transactions()).isPositive();
        assertThat(report.entriesInLedger()).isEqualTo(report.entriesPosted());
        assertThat(report.trialBalance().isBalanced()).isTrue();
        assertThat(report.trialBalance()
                        .line(report.trialBalance().lines().get(0).account().id()))
                .isPresent();
        assertThat(report.format()).contains("spread/hot ratio", "balanced");
    }
}
