package dev.exactly.benchmarks.fingerprint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** Each body once, correctness only: the figures come from the benchmark's own command. */
class FingerprintBenchmarkSmokeTest {

    @Test
    void theSpellingsOfOneDocumentShareAFingerprintAndEveryBodyIsCanonicalised() throws IOException {
        Fingerprint canonical = run("canonical");
        assertThat(run("spaced"))
                .as("the same charge, pretty-printed and unsorted")
                .isEqualTo(canonical);
        Fingerprint decimals = run("decimals");
        assertThat(decimals.algorithm()).isEqualTo(Fingerprinter.JCS_SHA256);
        assertThat(decimals).as("19.99 is not 1999").isNotEqualTo(canonical);
        assertThat(run("exponents").algorithm()).isEqualTo(Fingerprinter.JCS_SHA256);
    }

    @Test
    void anUnknownBodyIsRefused() {
        FingerprintBenchmark benchmark = new FingerprintBenchmark();
        benchmark.body = "yaml";
        assertThatThrownBy(benchmark::prepare).isInstanceOf(IllegalArgumentException.class);
    }

    private static Fingerprint run(String body) throws IOException {
        FingerprintBenchmark benchmark = new FingerprintBenchmark();
        benchmark.body = body;
        benchmark.prepare();
        assertThat(benchmark.floor()).hasSize(64);
        assertThat(benchmark.referenceCanonicaliser()).hasSize(64);
        return benchmark.fingerprint();
    }
}
