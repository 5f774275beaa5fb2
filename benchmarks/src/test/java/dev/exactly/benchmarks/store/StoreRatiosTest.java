package dev.exactly.benchmarks.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StoreRatiosTest {

    @Test
    void ratiosDivideByTheRawRateOfTheSameServer() {
        StoreRatios ratios = new StoreRatios();
        ratios.put("guarded", StoreKind.REDIS, 10_000);
        ratios.put("replay", StoreKind.REDIS, 30_000);
        ratios.put("twoRoundTrips", StoreKind.REDIS, 40_000);
        ratios.put("oneRoundTrip", StoreKind.REDIS, 60_000);
        ratios.put("guarded", StoreKind.MEMORY, 500_000);

        assertThat(ratios.guardedToRaw(StoreKind.REDIS)).isCloseTo(0.25, within(1e-9));
        assertThat(ratios.replayToRaw(StoreKind.REDIS)).isCloseTo(0.5, within(1e-9));
        assertThat(ratios.guardedToRaw(StoreKind.MEMORY)).isNaN();

        ByteArrayOutputStream text = new ByteArrayOutputStream();
        ratios.table().print(new PrintStream(text, true, StandardCharsets.UTF_8));
        assertThat(text.toString(StandardCharsets.UTF_8))
                .contains("redis", "10,000", "40,000", "60,000", "0.25", "0.50")
                .doesNotContain("postgres");
        assertThat(ratios.table().markdown()).startsWith("| store | guarded ops/s | raw 2 trips ops/s |");
    }
}
