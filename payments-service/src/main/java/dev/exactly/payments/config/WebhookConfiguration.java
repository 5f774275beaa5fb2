package dev.exactly.payments.config;

import dev.exactly.payments.charge.ChargeAnswers;
import dev.exactly.payments.charge.ChargeEvents;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.webhooks.DeliveryWorker;
import dev.exactly.payments.webhooks.Events;
import dev.exactly.payments.webhooks.Outbox;
import dev.exactly.payments.webhooks.WebhookEndpoints;
import java.time.InstantSource;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Webhooks: the outbox business code records events in, the endpoints, the event list and the delivery worker. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(WebhookProperties.class)
public class WebhookConfiguration {

    @Bean
    Outbox outbox(InstantSource clock) {
        return new Outbox(clock);
    }

    /** The charge's events, recorded by phase 3 in its transaction. */
    @Bean
    ChargeEvents chargeEvents(Outbox outbox, ChargeAnswers answers) {
        return new ChargeEvents(outbox, answers);
    }

    @Bean
    WebhookEndpoints webhookEndpoints(
            Jdbc jdbc, WebhookProperties properties, PaymentsProperties payments, InstantSource clock) {
        return new WebhookEndpoints(
                jdbc, clock, properties.settings(payments.demoMode()).allowPrivateNetworks());
    }

    @Bean
    Events events(Jdbc jdbc, InstantSource clock) {
        return new Events(jdbc, clock);
    }

    @Bean
    DeliveryWorker deliveryWorker(
            Jdbc jdbc, WebhookProperties properties, PaymentsProperties payments, InstantSource clock) {
        return new DeliveryWorker(
                jdbc,
                properties.settings(payments.demoMode()),
                clock,
                () -> ThreadLocalRandom.current().nextLong());
    }
}
