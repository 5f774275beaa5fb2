package dev.exactly.examples.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.testing.Ci;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A message whose listener fails after booking is redelivered by the broker, and booked once: the
 * redelivery gets the first booking back. A resend of the same event by its producer is not booked again
 * either. Against the RabbitMQ at localhost:5672 (a queue of this run's own); without one the test is
 * skipped, except with {@code CI=true}, where it fails.
 */
@SpringBootTest
class RedeliveryTest {
    private static final String QUEUE = "payment-events-" + UUID.randomUUID();

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", 5672), 2000);
        } catch (Exception e) {
            if (Ci.strict()) {
                throw new IllegalStateException("RabbitMQ is required at 127.0.0.1:5672 when CI=true", e);
            }
            Assumptions.abort("RabbitMQ is not reachable at 127.0.0.1:5672: " + e);
        }
        registry.add("spring.rabbitmq.host", () -> "127.0.0.1");
        registry.add("payments.queue", () -> QUEUE);
    }

    @AfterAll
    static void deleteQueue(@Autowired RabbitAdmin admin) {
        admin.deleteQueue(QUEUE);
    }

    /** A notifier that fails the first time it is told about each booking, after the booking was made. */
    static class FailingOnceNotifier extends Notifier {
        final List<Booking> attempts = new CopyOnWriteArrayList<>();

        @Override
        public void bookingConfirmed(Booking booking) {
            attempts.add(booking);
            if (attempts.stream().filter(booking::equals).count() == 1) {
                throw new IllegalStateException("the notification service timed out");
            }
        }
    }

    @TestConfiguration(proxyBeanMethods = false)
    static class Flaky {
        @Bean
        @Primary
        FailingOnceNotifier failingOnceNotifier() {
            return new FailingOnceNotifier();
        }
    }

    @Autowired
    RabbitTemplate rabbit;

    @Autowired
    Ledger ledger;

    @Autowired
    FailingOnceNotifier notifier;

    @Test
    void aRedeliveredMessageIsBookedOnce() {
        rabbit.convertAndSend(QUEUE, "{\"id\":\"evt-1001\",\"account\":\"acc-7\",\"amountMinor\":1500}");

        // delivered, booked, failed at the notification, redelivered, replayed, notified
        await().atMost(Duration.ofSeconds(30)).until(() -> notifier.attempts.size() == 2);
        assertThat(notifier.attempts)
                .as("the same booking both times")
                .hasSize(2)
                .containsOnly(notifier.attempts.getFirst());
        assertThat(ledger.bookings("evt-1001")).isEqualTo(1);

        // the producer sends the event again, as a new message
        rabbit.convertAndSend(QUEUE, "{\"id\":\"evt-1001\",\"amountMinor\":1500,\"account\":\"acc-7\"}");
        await().atMost(Duration.ofSeconds(30)).until(() -> notifier.attempts.size() == 3);
        assertThat(notifier.attempts).containsOnly(notifier.attempts.getFirst());
        assertThat(ledger.bookings("evt-1001")).isEqualTo(1);
    }
}
