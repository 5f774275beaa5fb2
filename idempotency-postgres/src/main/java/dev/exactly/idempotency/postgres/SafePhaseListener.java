package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.ScopeKey;
import java.time.Instant;

/** Shields recovery from a listener that throws. */
final class SafePhaseListener implements PhaseListener {
    private final PhaseListener delegate;

    SafePhaseListener(PhaseListener delegate) {
        this.delegate = delegate;
    }

    private static void quietly(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException ignored) {
            // a metrics listener must never change what recovery does
        }
    }

    @Override
    public void onRecoveryTakeover(PhaseRecord record) {
        quietly(() -> delegate.onRecoveryTakeover(record));
    }

    @Override
    public void onRetryScheduled(ScopeKey key, int attempt, Instant nextAttemptAt, String error) {
        quietly(() -> delegate.onRetryScheduled(key, attempt, nextAttemptAt, error));
    }

    @Override
    public void onDeadLettered(ScopeKey key, int attempts, String error) {
        quietly(() -> delegate.onDeadLettered(key, attempts, error));
    }

    @Override
    public void onOperatorTakeover(PhaseRecord record) {
        quietly(() -> delegate.onOperatorTakeover(record));
    }
}
