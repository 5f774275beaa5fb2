/** The reference payment API: charges, refunds, balances and recovery, each moving money exactly once. */
@NullMarked
package dev.exactly.payments;

import org.jspecify.annotations.NullMarked;
