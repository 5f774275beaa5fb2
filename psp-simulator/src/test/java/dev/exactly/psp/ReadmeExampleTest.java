package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The README's example, verbatim (the documentation check of the examples module finds it here). */
class ReadmeExampleTest {

    @Test
    void theReadmeExampleCapturesOnce() throws Exception {
        try (PspSimulator psp = PspSimulator.start(PspConfig.ofDefaults());        // loopback, free port
             PspClient client = PspClient.create(psp.baseUri())) {
            PspCharge charge = client.charge(PspChargeRequest.of(1999, "usd", "tok_visa"), "pay_123/attempt");
            assertThat(psp.captureCount("pay_123/attempt")).isEqualTo(1);
        }
    }
}
