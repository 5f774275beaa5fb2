package dev.exactly.idempotency.spring.boot.observation;

import dev.exactly.idempotency.IdempotencyRequest;
import io.micrometer.observation.Observation;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** The context of one guarded execution: its request, and once it ended, its outcome. */
public final class IdempotencyObservationContext extends Observation.Context {
    private final IdempotencyRequest request;
    private volatile @Nullable String outcome;

    public IdempotencyObservationContext(IdempotencyRequest request) {
        this.request = Objects.requireNonNull(request, "request");
    }

    /** The guarded request (its scope holds the tenant and the key: never a tag). */
    public IdempotencyRequest request() {
        return request;
    }

    /**
     * How the execution ended, {@code null} while it runs: {@code executed}, {@code replayed},
     * {@code released}, {@code unrecorded} (the action ran, its outcome is recorded in the background),
     * {@code conflict} (the key was in flight), {@code mismatch} (the key was used for another request),
     * {@code lease_lost}, {@code store_unavailable}, {@code invalid} (a key or body the engine refused),
     * or {@code error} (the action threw; the key was released).
     */
    public @Nullable String outcome() {
        return outcome;
    }

    void outcome(String outcome) {
        this.outcome = outcome;
    }
}
