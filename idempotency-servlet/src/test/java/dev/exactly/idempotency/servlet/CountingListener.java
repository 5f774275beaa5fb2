package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.RecordStatus;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts engine events, as a metrics listener would. */
public final class CountingListener implements IdempotencyListener {
    public final AtomicInteger claims = new AtomicInteger();
    public final AtomicInteger replays = new AtomicInteger();
    public final AtomicInteger mismatches = new AtomicInteger();
    public final AtomicInteger conflicts = new AtomicInteger();
    public final AtomicInteger recorded = new AtomicInteger();
    public final AtomicInteger released = new AtomicInteger();
    public final AtomicInteger storeErrors = new AtomicInteger();
    public final AtomicInteger renewed = new AtomicInteger();

    public void reset() {
        for (AtomicInteger counter :
                new AtomicInteger[] {claims, replays, mismatches, conflicts, recorded, released, storeErrors, renewed
                }) {
            counter.set(0);
        }
    }

    @Override
    public void onClaim(IdempotencyRequest request, boolean takeover) {
        claims.incrementAndGet();
    }

    @Override
    public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
        replays.incrementAndGet();
    }

    @Override
    public void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {
        mismatches.incrementAndGet();
    }

    @Override
    public void onConflict(IdempotencyRequest request, boolean waited) {
        conflicts.incrementAndGet();
    }

    @Override
    public void onRecorded(IdempotencyRequest request, RecordStatus status, Duration held) {
        recorded.incrementAndGet();
    }

    @Override
    public void onReleased(IdempotencyRequest request, Duration held) {
        released.incrementAndGet();
    }

    @Override
    public void onRenewal(IdempotencyRequest request, RenewalResult result) {
        if (result == RenewalResult.RENEWED) {
            renewed.incrementAndGet();
        }
    }

    @Override
    public void onStoreError(IdempotencyRequest request, Throwable error) {
        storeErrors.incrementAndGet();
    }
}
