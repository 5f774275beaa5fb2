package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;

/** A store that forwards to another; tests override single operations to inject faults. */
public class ForwardingStore extends ForwardingIdempotencyStore {

    public ForwardingStore(IdempotencyStore delegate) {
        super(delegate);
    }
}
