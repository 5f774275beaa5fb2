/** The tenant's view of the double-entry ledger: account codes, balances, entries and the trial balance. */
@NullMarked
package dev.exactly.payments.ledger;

import org.jspecify.annotations.NullMarked;
