/** Implementation of the ledger: SQL, JDBC plumbing and caches. Not a public API. */
@NullMarked
package dev.exactly.ledger.internal;

import org.jspecify.annotations.NullMarked;
