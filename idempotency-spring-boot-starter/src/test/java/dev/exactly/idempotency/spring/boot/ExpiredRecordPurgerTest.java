package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ExpiredRecordPurgerTest {

    /** An Error thrown out of a scheduled run would end the schedule for good, and the table would grow unpurged. */
    @Test
    void aRunThatThrowsAnErrorIsCountedAndTheNextRunsOnTime() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch second = new CountDownLatch(1);
        ExpiredRecordPurger purger = new ExpiredRecordPurger(batch -> {
            if (calls.incrementAndGet() == 1) {
                throw new NoClassDefFoundError("a class that does not link");
            }
            second.countDown();
            return 7;
        }, Duration.ofMillis(5), 100);
        purger.start();
        try {
            assertThat(second.await(10, TimeUnit.SECONDS)).as("a run after the Error").isTrue();
        } finally {
            purger.stop();
        }
        assertThat(purger.failures()).isEqualTo(1);
        assertThat(purger.purged()).isGreaterThanOrEqualTo(7);
    }
}
