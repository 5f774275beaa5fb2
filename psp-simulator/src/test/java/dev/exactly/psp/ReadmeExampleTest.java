package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The README's example, verbatim (the documentation check of the examples module finds it here). */
class ReadmeExampleTest {

    @Test
    void theReadmeExampleCapturesOnce() throws Exception {
        try (PspSimulator psp = PspSimulator.start(PspConfig.ofDefaults()); // loopback, free port
                PspClient client = PspClient.create(psp.baseUri())) {
            PspCharge charge = client.charge(PspChargeRequest.of(1999, "usd", "tok_visa"), "pay_123/attempt");
            assertThat(charge.status()).isEqualTo(ChargeStatus.CAPTURED);
            assertThat(psp.captureCount("pay_123/attempt")).isEqualTo(1);
        }
    }

    @Test
    void theReadmeHoldCaptureAndRefundExample() {
        try (PspSimulator psp = PspSimulator.start(PspConfig.ofDefaults());
                PspClient client = PspClient.create(psp.baseUri())) {
            PspCharge hold = client.authorize(PspChargeRequest.of(5000, "usd", "tok_visa"), "pay_7/authorize");
            PspCharge captured = client.capture(hold.id(), 4000, "pay_7/capture"); // partial capture
            PspRefund refund = client.refund(PspRefundRequest.of(hold.id(), 1500, "usd"), "rf_1/refund");
            assertThat(captured.amountCaptured()).isEqualTo(4000);
            assertThat(refund.succeeded()).isTrue();
            assertThat(psp.refunds()).singleElement().returns(1500L, Refund::amount);
        }
    }
}
