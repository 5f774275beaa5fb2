package dev.exactly.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs the HTTP benchmark for a fraction of a second per endpoint and mix, and checks correctness only:
 * requests were answered, none failed, replays came back marked, and every handler ran exactly once per
 * fresh key (on the unguarded endpoint, once per request). Never speed.
 */
class HttpBenchmarkSmokeTest {

    @Test
    void everyEndpointAnswersAndGuardedHandlersRunOncePerKey() throws Exception {
        HttpBenchmark.Settings settings = new HttpBenchmark.Settings(
                4, Duration.ZERO, Duration.ofMillis(200), 1, 0.5, 20, List.of(Variant.values()));
        ByteArrayOutputStream progress = new ByteArrayOutputStream();

        HttpReport report = HttpBenchmark.run(settings, new PrintStream(progress, true, StandardCharsets.UTF_8));

        for (Mix mix : settings.mixes()) {
            for (Variant variant : Variant.values()) {
                PhaseResult result = report.result(mix, variant);
                assertThat(result.errors()).as("%s %s: %s", mix, variant, result.errorSamples()).isZero();
                assertThat(result.fresh()).as("%s %s fresh", mix, variant).isPositive();
                if (mix.replayShare() > 0) {
                    assertThat(result.replayed()).as("%s %s replayed", mix, variant).isPositive();
                }
                assertThat(result.rate()).isPositive();
            }
        }
        for (Variant variant : Variant.values()) {
            assertThat(report.executions().get(variant)).as(variant.id())
                    .isEqualTo(report.expected().get(variant))
                    .isPositive();
        }
        assertThat(report.clean()).isTrue();
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        report.print(new PrintStream(text, true, StandardCharsets.UTF_8));
        assertThat(text.toString(StandardCharsets.UTF_8)).contains("vs unguarded", "postgres", "50% replays");
    }
}
