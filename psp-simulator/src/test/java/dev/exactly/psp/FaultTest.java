package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FaultTest {

    @Test
    void parsesTheHeaderSyntax() {
        List<Fault> faults = Fault.parseHeader(
                "latency=200ms, error, error=503, timeout, timeout=5s, timeout-after-capture=2s, drop-response, decline, decline=insufficient_funds");

        assertThat(faults)
                .containsExactly(
                        Fault.latency(Duration.ofMillis(200)),
                        Fault.error(),
                        Fault.error(503),
                        Fault.timeout(),
                        Fault.timeout(Duration.ofSeconds(5)),
                        Fault.timeoutAfterCapture(Duration.ofSeconds(2)),
                        Fault.dropResponse(),
                        Fault.decline("card_declined"),
                        Fault.decline("insufficient_funds"));
        assertThat(Fault.parseHeader(Fault.header(faults))).isEqualTo(faults);
        assertThat(Fault.parseHeader("  ")).isEmpty();
        assertThat(Fault.parseHeader("timeout-after-refund=2s, timeout-after-commit"))
                .containsExactly(Fault.timeoutAfterCapture(Duration.ofSeconds(2)), Fault.timeoutAfterCapture());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "bogus",
                "latency",
                "latency=fast",
                "latency=0ms",
                "latency=10m",
                "error=404",
                "timeout=999s",
                "drop-response=1",
                "decline=Not Valid",
                "error,,timeout",
                "latency=-5ms"
            })
    void rejectsInvalidFaults(String header) {
        assertThatThrownBy(() -> Fault.parseHeader(header))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfiesAnyOf(
                        e -> assertThat(e.getMessage()).contains("invalid fault \"" + header + "\""),
                        e -> assertThat(e.getMessage()).contains("empty fault in \"" + header + "\""));
    }

    @Test
    void settingsBuilderValidates() {
        assertThatThrownBy(() -> FaultSettings.custom().errorRate(1.5).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("errorRate");
        assertThatThrownBy(() -> FaultSettings.custom().errorRate(Double.NaN).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FaultSettings.custom().errorStatus(404).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(
                        () -> FaultSettings.custom().timeoutHold(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FaultSettings.custom()
                        .latency(Duration.ofMinutes(2), Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PspConfig.custom().port(70_000).build()).isInstanceOf(IllegalArgumentException.class);

        FaultSettings s = FaultSettings.custom()
                .errorRate(0.25)
                .decline(DeclineRule.amount(6666, "do_not_honor"))
                .build();
        assertThat(FaultSettings.from(s).seed(7).build())
                .returns(0.25, FaultSettings::errorRate)
                .returns(7L, FaultSettings::seed)
                .returns(List.of(DeclineRule.amount(6666, "do_not_honor")), FaultSettings::declines);
    }

    @Test
    void chargeRequestValidatesAndNormalises() {
        assertThat(PspChargeRequest.of(100, "USD", "tok_visa").currency()).isEqualTo("usd");
        assertThatThrownBy(() -> PspChargeRequest.of(0, "usd", "tok_visa")).hasMessageContaining("amount");
        assertThatThrownBy(() -> PspChargeRequest.of(100, "dollars", "tok_visa"))
                .hasMessageContaining("currency");
        assertThatThrownBy(() -> PspChargeRequest.of(100, "usd", "")).hasMessageContaining("source");
    }
}
