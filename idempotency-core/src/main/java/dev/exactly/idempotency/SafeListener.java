package dev.exactly.idempotency;

import java.time.Duration;

/** Shields the engine from a listener that throws. */
final class SafeListener implements IdempotencyListener {
    private final IdempotencyListener delegate;

    SafeListener(IdempotencyListener delegate) {
        this.delegate = delegate;
    }

    private static void quietly(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException ignored) {
            // a metrics listener must never change the outcome of a payment
        }
    }

    @Override
    public void onClaim(IdempotencyRequest request, boolean takeover) {
        quietly(() -> delegate.onClaim(request, takeover));
    }

    @Override
    public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
        quietly(() -> delegate.onReplay(request, record));
    }

    @Override
    public void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {
        quietly(() -> delegate.onMismatch(request, record));
    }

    @Override
    public void onConflict(IdempotencyRequest request, boolean waited) {
        quietly(() -> delegate.onConflict(request, waited));
    }

    @Override
    public void onWait(IdempotencyRequest request, Duration waited, WaitResult result) {
        quietly(() -> delegate.onWait(request, waited, result));
    }

    @Override
    public void onRecorded(IdempotencyRequest request, RecordStatus status, Duration held) {
        quietly(() -> delegate.onRecorded(request, status, held));
    }

    @Override
    public void onReleased(IdempotencyRequest request, Duration held) {
        quietly(() -> delegate.onReleased(request, held));
    }

    @Override
    public void onLeaseLost(IdempotencyRequest request, Duration held) {
        quietly(() -> delegate.onLeaseLost(request, held));
    }

    @Override
    public void onRenewal(IdempotencyRequest request, RenewalResult result) {
        quietly(() -> delegate.onRenewal(request, result));
    }

    @Override
    public void onStoreError(IdempotencyRequest request, Throwable error) {
        quietly(() -> delegate.onStoreError(request, error));
    }

    @Override
    public void onRepair(IdempotencyRequest request, Repair repair, RepairResult result) {
        quietly(() -> delegate.onRepair(request, repair, result));
    }
}
