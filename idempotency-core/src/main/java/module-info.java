/**
 * The idempotency engine, the store SPI and the in-memory store. Exports the API ({@code dev.exactly.idempotency}),
 * the store SPI ({@code .spi}) and the in-memory store ({@code .memory}); {@code .internal} is open only to this
 * project's stores.
 */
// the stores are compiled after the core, so the targets of the qualified export are not there to be found yet
@SuppressWarnings("module")
module dev.exactly.idempotency {
    requires static transitive org.jspecify; // its annotations are in the API: a reader sees them too

    exports dev.exactly.idempotency;
    exports dev.exactly.idempotency.spi;
    exports dev.exactly.idempotency.memory;
    exports dev.exactly.idempotency.internal to
            dev.exactly.idempotency.redis,
            dev.exactly.idempotency.postgres;
}
