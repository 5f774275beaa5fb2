package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ExpiredRecordPurgerTest {

    /** An Error thrown out of a scheduled run would end the schedule for good, and the table would grow unpurged. */
    @Test
    void aRunThatThrowsAnErrorIsCountedAndTheNextRunsOnTime() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        ExpiredRecordPurger purger = new ExpiredRecordPurger(
                batch -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new NoClassDefFoundError("a class that does not link");
                    }
                    return 7;
                },
                Duration.ofMillis(5),
                100);
        purger.start();
        try {
            // a run is counted when it has ended, its rows added
            await("a run after the Error").atMost(Duration.ofSeconds(10)).until(() -> purger.runs() >= 2);
        } finally {
            purger.stop();
        }
        assertThat(purger.failures()).isEqualTo(1);
        assertThat(purger.purged()).isGreaterThanOrEqualTo(7);
    }
}
