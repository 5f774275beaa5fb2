package dev.exactly.payments.tasks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PeriodicTest {

    /**
     * A scheduled executor runs a task again only while no run has thrown: an Error out of one run (running out of
     * memory, a class that does not link) would end the webhooks' deliveries, the expiry of authorizations,
     * reconciliation or the purge until the next restart, and nothing would say so.
     */
    @Test
    void runsThatThrowAnErrorOrAnExceptionAreFollowedByTheNext() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch third = new CountDownLatch(3);
        try (Periodic ignored = Periodic.start("periodic-test", Duration.ZERO, Duration.ofMillis(5), () -> {
            int run = runs.incrementAndGet();
            third.countDown();
            if (run == 1) {
                throw new NoClassDefFoundError("a class that does not link");
            }
            if (run == 2) {
                throw new IllegalStateException("the database is down");
            }
        })) {
            assertThat(third.await(10, TimeUnit.SECONDS))
                    .as("runs after an Error and an exception: %s", runs)
                    .isTrue();
        }
    }
}
