package dev.exactly.idempotency.redis.internal;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * This process's estimate of the Redis server's clock, from {@code TIME}: the store writes the times of
 * a new claim and of a completion itself (a plain {@code SET}, no script reading {@code TIME}), in the
 * server's time scale, so that the lease ends that processes read agree whatever their own clocks say.
 *
 * <p>A sample is the server's time paired with the midpoint of the local monotonic clock between
 * sending {@code TIME} and receiving its answer; the estimate is off by at most half that round trip,
 * plus the drift of the local monotonic clock against the server's since the sample (samples are
 * refreshed every {@value #REFRESH_SECONDS} s), plus a millisecond of rounding: {@link #uncertaintyMillis()}.
 *
 * <p>Nothing that decides who owns a key depends on this estimate: the times it produces are what a
 * record shows (and what a waiter's next wake-up is planned on); whether a lease is over is decided by
 * the claim script from the key's TTL, which the server counts (see {@code RecordValue}), and every
 * write is fenced by the owner token. An estimate that is wrong, however far, can make a lease look
 * longer or shorter to a reader, never give a key to a second owner while the first one's lease runs.
 */
public final class ServerClock {
    /** How often the estimate is refreshed, seconds. */
    public static final long REFRESH_SECONDS = 30;

    private static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(REFRESH_SECONDS);

    private final AtomicBoolean refreshing = new AtomicBoolean();
    private volatile Sample sample = new Sample(System.currentTimeMillis(), System.nanoTime(), Long.MAX_VALUE / 4);
    private volatile long skewMillis;
    private volatile boolean synced;
    private volatile boolean attempted;
    private volatile long lastAttemptNanos;

    /** The estimated server time, epoch milliseconds. */
    public long nowMillis() {
        Sample s = sample;
        return s.serverMillis + Math.floorDiv(System.nanoTime() - s.nanos, 1_000_000L) + skewMillis;
    }

    /** How far {@link #nowMillis()} may be from the server's clock, milliseconds (huge before the first sample). */
    public long uncertaintyMillis() {
        return sample.uncertaintyMillis;
    }

    /** Whether a sample was ever taken. */
    public boolean synced() {
        return synced;
    }

    /**
     * Whether a new sample is due (none tried yet, or the last try older than {@value #REFRESH_SECONDS} s:
     * a server that refuses {@code TIME} is not asked on every call) and no other caller is taking one;
     * if so the caller must take it and call {@link #record} or {@link #refreshFailed()}.
     */
    public boolean claimRefresh() {
        long now = System.nanoTime();
        if (attempted && now - lastAttemptNanos <= REFRESH_NANOS) {
            return false;
        }
        if (!refreshing.compareAndSet(false, true)) {
            return false;
        }
        attempted = true;
        lastAttemptNanos = now;
        return true;
    }

    /** Ends a refresh that got no answer; the next call may try again. */
    public void refreshFailed() {
        refreshing.set(false);
    }

    /**
     * Records a {@code TIME} answer (seconds, microseconds) sent at {@code sentNanos} and received at
     * {@code receivedNanos} (local monotonic clock).
     */
    public void record(long sentNanos, long receivedNanos, List<byte[]> time) {
        try {
            long seconds = Long.parseLong(RecordValue.text(time.get(0)));
            long micros = Long.parseLong(RecordValue.text(time.get(1)));
            long serverMillis = seconds * 1000 + micros / 1000;
            long halfRoundTrip = (receivedNanos - sentNanos) / 2;
            long uncertainty = TimeUnit.NANOSECONDS.toMillis(halfRoundTrip) + 1;
            Sample current = sample;
            // keep the tighter sample when it is recent: one slow answer must not loosen the estimate
            if (!synced || uncertainty <= current.uncertaintyMillis || receivedNanos - current.nanos > REFRESH_NANOS) {
                sample = new Sample(serverMillis, sentNanos + halfRoundTrip, uncertainty);
            }
            synced = true;
        } finally {
            refreshing.set(false);
        }
    }

    /**
     * Shifts every estimate by {@code millis}: for tests that show that a wrong estimate never lets two
     * owners hold a key at once.
     */
    public void skew(long millis) {
        skewMillis = millis;
    }

    private record Sample(long serverMillis, long nanos, long uncertaintyMillis) {}
}
