package dev.exactly.idempotency.postgres;

import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How far a phase got: a name the owner chose (e.g. {@code "shipment_requested"}) and, optionally, a
 * little state to resume with (an id, a JSON document). Committed with the owner's own writes
 * ({@link AtomicPhases#checkpoint}), handed to whoever resumes the phase after its owner died.
 *
 * @param name  1 to 100 characters
 * @param state at most {@value #MAX_STATE_BYTES} bytes, or {@code null}
 */
public record Checkpoint(String name, byte @Nullable [] state) {
    /** The most state a checkpoint carries: it is a recovery point, not a document store. */
    public static final int MAX_STATE_BYTES = 64 * 1024;

    public Checkpoint {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.length() > 100) {
            throw new IllegalArgumentException("a checkpoint name is 1-100 characters");
        }
        if (state != null && state.length > MAX_STATE_BYTES) {
            throw new IllegalArgumentException("checkpoint state is at most " + MAX_STATE_BYTES + " bytes");
        }
        state = state == null ? null : state.clone();
    }

    /** A checkpoint without state. */
    public static Checkpoint of(String name) {
        return new Checkpoint(name, null);
    }

    @Override
    public byte @Nullable [] state() {
        return state == null ? null : state.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Checkpoint other && name.equals(other.name) && Arrays.equals(state, other.state);
    }

    @Override
    public int hashCode() {
        return 31 * name.hashCode() + Arrays.hashCode(state);
    }

    @Override
    public String toString() {
        return "Checkpoint[" + name + (state == null ? "" : ", " + state.length + " bytes") + "]";
    }
}
