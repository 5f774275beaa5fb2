/**
 * The PostgreSQL store and its schema. Exports {@code dev.exactly.idempotency.postgres}. The migrations ship as
 * resources under {@code db/idempotency}; on the module path, apply them with {@code PostgresSchema}, which reads
 * them from inside the module.
 */
// pgjdbc is an automatic module (its jar names itself org.postgresql.jdbc); the store uses its LISTEN/NOTIFY API
@SuppressWarnings("requires-automatic")
module dev.exactly.idempotency.postgres {
    requires transitive dev.exactly.idempotency;
    requires transitive java.sql;
    requires org.postgresql.jdbc;
    requires static transitive org.jspecify; // its annotations are in the API: a reader sees them too

    exports dev.exactly.idempotency.postgres;
}
