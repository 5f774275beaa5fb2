package dev.exactly.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ExecutionsTest {
    @Test
    void aKeyThatMustRunOnceIsCaughtRunningTwiceUnderItsRandomPrefix() {
        Executions executions = new Executions(true);

        assertThat(executions.record("3f9c01a2.h5e1-p3-1-42")).isEqualTo(1);
        assertThat(executions.record("3f9c01a2.h5e1-p3-1-43")).isEqualTo(2);
        assertThat(executions.record("00000000.h5e1-p3-1-42")).isEqualTo(3);

        assertThat(executions.count()).isEqualTo(3);
        assertThat(executions.duplicates()).isEqualTo(1);
        assertThat(executions.duplicateSamples()).containsExactly("00000000.h5e1-p3-1-42");
    }

    @Test
    void theUnguardedEndpointKeepsTheSameBooksButMayRunAKeyAgain() {
        Executions executions = new Executions(false);

        executions.record("3f9c01a2.replay-7");
        executions.record("3f9c01a2.replay-7");
        executions.record("3f9c01a2.replay-7");

        assertThat(executions.count()).isEqualTo(3);
        assertThat(executions.duplicates()).isZero();
        assertThat(executions.duplicateSamples()).isEmpty();
    }
}
