package dev.exactly.payments.config;

import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.reconciliation.Mismatch;
import dev.exactly.payments.reconciliation.Reconciliation;
import dev.exactly.payments.reconciliation.ReconciliationSchedule;
import dev.exactly.psp.PspClient;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.InstantSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Reconciliation: the operator's on-demand comparison, and the scheduled one whose open mismatches are the
 * gauge {@code exactly.payments.reconciliation.mismatches} (tag {@code kind}).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ReconciliationProperties.class)
public class ReconciliationConfiguration {

    @Bean
    Reconciliation reconciliation(Jdbc jdbc, PspClient psp) {
        return new Reconciliation(jdbc, psp);
    }

    @Bean
    ReconciliationSchedule reconciliationSchedule(
            Reconciliation reconciliation, InstantSource clock, ReconciliationProperties properties) {
        return new ReconciliationSchedule(
                reconciliation,
                clock,
                new ReconciliationSchedule.Settings(
                        properties.enabled(), properties.interval(), properties.lookback()));
    }

    @Bean
    MeterBinder reconciliationMismatches(ReconciliationSchedule schedule) {
        return registry -> {
            for (Mismatch.Kind kind : Mismatch.Kind.values()) {
                Gauge.builder("exactly.payments.reconciliation.mismatches", schedule, s -> s.open(kind))
                        .description("Mismatches between the processor's books and the ledger found by the last "
                                + "scheduled reconciliation")
                        .tag("kind", kind.wireName())
                        .register(registry);
            }
        };
    }
}
