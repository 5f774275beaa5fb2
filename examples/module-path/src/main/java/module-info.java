/**
 * An application on the module path: it reads the API packages of the modules it requires, and nothing of their
 * {@code internal} packages, which the modules do not export.
 */
module dev.exactly.examples.modular {
    requires dev.exactly.idempotency.redis; // and, through it, dev.exactly.idempotency
    requires dev.exactly.idempotency.postgres;
    requires dev.exactly.ledger;
    // the driver's data source; pgjdbc is an automatic module, which does not say that its data sources
    // need java.naming
    requires org.postgresql.jdbc;
    requires java.naming;
}
