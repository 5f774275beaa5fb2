package dev.exactly.idempotency.spi;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A store that forwards every call to another one. Extend it to decorate a store (tracing, fault
 * injection in tests) by overriding only the operations of interest.
 */
public abstract class ForwardingIdempotencyStore implements IdempotencyStore {
    private final IdempotencyStore delegate;

    protected ForwardingIdempotencyStore(IdempotencyStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /**
     * The store calls are forwarded to, asked on every call: a subclass may return another store from one
     * call to the next (one it swaps between phases of its own, say).
     */
    protected IdempotencyStore delegate() {
        return delegate;
    }

    @Override
    public ClaimOutcome claim(
            ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
        return delegate().claim(key, fingerprint, owner, lease, retention);
    }

    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        return delegate().complete(key, owner, outcome, response);
    }

    @Override
    public boolean release(ScopeKey key, OwnerToken owner) {
        return delegate().release(key, owner);
    }

    @Override
    public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
        return delegate().renew(key, owner, lease);
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        return delegate().find(key);
    }

    @Override
    public ChangeSubscription subscribe(ScopeKey key) {
        return delegate().subscribe(key);
    }

    @Override
    public void close() {
        delegate().close();
    }
}
