package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Optional;

/** A store that forwards to another; tests override single operations to inject faults. */
class ForwardingStore implements IdempotencyStore {
    private final IdempotencyStore delegate;

    ForwardingStore(IdempotencyStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public ClaimOutcome claim(ScopeKey key, Fingerprint fingerprint, Duration lease, Duration retention) {
        return delegate.claim(key, fingerprint, lease, retention);
    }

    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        return delegate.complete(key, owner, outcome, response);
    }

    @Override
    public boolean release(ScopeKey key, OwnerToken owner) {
        return delegate.release(key, owner);
    }

    @Override
    public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
        return delegate.renew(key, owner, lease);
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        return delegate.find(key);
    }

    @Override
    public ChangeSubscription subscribe(ScopeKey key) {
        return delegate.subscribe(key);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
