package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.ScopeKey;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A phase this process owns: the key, the fencing token every write must present, and what earlier
 * owners committed. Owned after {@link AtomicPhases#begin} claimed or took over the key, or after
 * recovery or an operator took it over.
 *
 * @param key         the scope
 * @param owner       the fencing token of this ownership
 * @param fingerprint the fingerprint of the request that began the phase
 * @param policy      lease, retention and keep-alive of the phase
 * @param takeover    whether an earlier owner's lease had expired and this one took over
 * @param checkpoint  the last checkpoint an earlier owner committed, or {@code null} for a new phase
 * @param attempts    failed attempts so far ({@link AtomicPhases#retryLater})
 */
public record Phase(
        ScopeKey key,
        OwnerToken owner,
        Fingerprint fingerprint,
        IdempotencyPolicy policy,
        boolean takeover,
        @Nullable Checkpoint checkpoint,
        int attempts) {

    public Phase {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(policy, "policy");
    }

    /** Whether an earlier owner committed a checkpoint: the work resumes from it instead of starting anew. */
    public boolean resumed() {
        return checkpoint != null;
    }

    /** Whether the last checkpoint has this name. */
    public boolean at(String checkpointName) {
        return checkpoint != null && checkpoint.name().equals(checkpointName);
    }
}
