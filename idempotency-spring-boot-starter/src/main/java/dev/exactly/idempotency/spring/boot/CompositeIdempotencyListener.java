package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.RecordStatus;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Every {@link IdempotencyListener} bean of the application, called in order; one that throws does not
 * keep the others from their event (nor, as always, changes the request's outcome).
 */
final class CompositeIdempotencyListener implements IdempotencyListener {
    private final List<IdempotencyListener> listeners;

    private CompositeIdempotencyListener(List<IdempotencyListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    /** The single listener itself, a composite of several, or {@link IdempotencyListener#NOOP} for none. */
    static IdempotencyListener of(List<IdempotencyListener> listeners) {
        return switch (listeners.size()) {
            case 0 -> IdempotencyListener.NOOP;
            case 1 -> listeners.getFirst();
            default -> new CompositeIdempotencyListener(listeners);
        };
    }

    private void each(Consumer<IdempotencyListener> event) {
        for (IdempotencyListener listener : listeners) {
            try {
                event.accept(listener);
            } catch (RuntimeException ignored) {
                // observers never change an outcome, nor starve each other
            }
        }
    }

    @Override
    public void onClaim(IdempotencyRequest request, boolean takeover) {
        each(l -> l.onClaim(request, takeover));
    }

    @Override
    public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
        each(l -> l.onReplay(request, record));
    }

    @Override
    public void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {
        each(l -> l.onMismatch(request, record));
    }

    @Override
    public void onConflict(IdempotencyRequest request, boolean waited) {
        each(l -> l.onConflict(request, waited));
    }

    @Override
    public void onWait(IdempotencyRequest request, Duration waited, WaitResult result) {
        each(l -> l.onWait(request, waited, result));
    }

    @Override
    public void onRecorded(IdempotencyRequest request, RecordStatus status, Duration held) {
        each(l -> l.onRecorded(request, status, held));
    }

    @Override
    public void onReleased(IdempotencyRequest request, Duration held) {
        each(l -> l.onReleased(request, held));
    }

    @Override
    public void onRenewal(IdempotencyRequest request, RenewalResult result) {
        each(l -> l.onRenewal(request, result));
    }

    @Override
    public void onLeaseLost(IdempotencyRequest request, Duration held) {
        each(l -> l.onLeaseLost(request, held));
    }

    @Override
    public void onStoreError(IdempotencyRequest request, Throwable error) {
        each(l -> l.onStoreError(request, error));
    }

    @Override
    public String toString() {
        return "CompositeIdempotencyListener" + listeners;
    }
}
