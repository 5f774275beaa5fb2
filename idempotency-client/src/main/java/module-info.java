/**
 * The client SDK: keys, retries and the key journal. Exports {@code dev.exactly.idempotency.client} and
 * {@code .intent}; its {@code internal} package is not exported.
 */
module dev.exactly.idempotency.client {
    requires transitive java.net.http;
    requires transitive java.sql;
    requires static transitive org.jspecify; // its annotations are in the API: a reader sees them too

    exports dev.exactly.idempotency.client;
    exports dev.exactly.idempotency.client.intent;
}
