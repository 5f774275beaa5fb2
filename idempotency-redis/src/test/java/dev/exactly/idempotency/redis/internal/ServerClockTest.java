package dev.exactly.idempotency.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ServerClockTest {
    private static List<byte[]> time(long seconds, long micros) {
        return List.of(
                Long.toString(seconds).getBytes(StandardCharsets.US_ASCII),
                Long.toString(micros).getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void estimatesTheServerClockFromTheMidpointOfTheRoundTrip() {
        ServerClock clock = new ServerClock();
        assertThat(clock.synced()).isFalse();
        assertThat(clock.claimRefresh()).as("no sample yet: one is due").isTrue();
        assertThat(clock.claimRefresh()).as("one caller takes it").isFalse();

        long sent = System.nanoTime();
        long received = sent + TimeUnit.MILLISECONDS.toNanos(4);
        long server = 4_102_444_800_000L; // far from this machine's clock: only the server's counts
        clock.record(sent, received, time(server / 1000, 0));

        assertThat(clock.synced()).isTrue();
        assertThat(clock.uncertaintyMillis())
                .as("half the round trip, plus rounding")
                .isEqualTo(3);
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
        assertThat(clock.nowMillis()).isBetween(server - 2, server + elapsed);
        assertThat(clock.claimRefresh()).as("fresh").isFalse();
    }

    @Test
    void aSlowAnswerDoesNotReplaceATighterRecentSample() {
        ServerClock clock = new ServerClock();
        long sent = System.nanoTime();
        clock.record(sent, sent + TimeUnit.MILLISECONDS.toNanos(2), time(1_000, 0));
        clock.record(sent, sent + TimeUnit.MILLISECONDS.toNanos(400), time(2_000, 0));
        assertThat(clock.uncertaintyMillis()).isEqualTo(2);
        assertThat(clock.nowMillis())
                .isLessThan(1_000_000 + 500 + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent));
    }

    @Test
    void aSkewShiftsEveryEstimate() {
        ServerClock clock = new ServerClock();
        long sent = System.nanoTime();
        clock.record(sent, sent, time(1_000, 0));
        long before = clock.nowMillis();
        clock.skew(-3_600_000);
        assertThat(clock.nowMillis()).isBetween(before - 3_600_000, before - 3_600_000 + 1_000);
    }
}
