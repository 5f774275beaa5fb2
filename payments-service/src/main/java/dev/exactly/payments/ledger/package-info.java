/** The tenant's view of the double-entry ledger: account codes and read models. */
@NullMarked
package dev.exactly.payments.ledger;

import org.jspecify.annotations.NullMarked;
