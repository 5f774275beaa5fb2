package dev.exactly.examples.messaging;

import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/** Consumes payment events from the RabbitMQ queue {@code payments.queue} (see application.properties). */
@SpringBootApplication
public class PaymentEventsApplication {

    /** The queue, declared on the broker at startup if it is missing. */
    @Bean
    Queue paymentEvents(@Value("${payments.queue}") String name) {
        return new Queue(name, true);
    }

    public static void main(String[] args) {
        SpringApplication.run(PaymentEventsApplication.class, args);
    }
}
