/**
 * The double-entry ledger on PostgreSQL. Exports {@code dev.exactly.ledger}; its {@code internal} package is not
 * exported. The migrations ship as resources under {@code db/ledger}; on the module path, apply them with
 * {@code LedgerSchema}, which reads them from inside the module.
 */
module dev.exactly.ledger {
    requires transitive java.sql;
    requires static transitive org.jspecify; // its annotations are in the API: a reader sees them too

    exports dev.exactly.ledger;
}
