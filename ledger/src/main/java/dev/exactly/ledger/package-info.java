/**
 * A double-entry ledger on PostgreSQL.
 *
 * <p>{@link dev.exactly.ledger.Ledger} is the entry point: it opens {@link dev.exactly.ledger.Account}s,
 * posts balanced {@link dev.exactly.ledger.JournalEntry journal entries} (inside the caller's transaction
 * or in its own), reverses them, and reads balances, entries and trial balances. Amounts are
 * {@link dev.exactly.ledger.Money}: {@code long} minor units of an ISO 4217
 * {@link dev.exactly.ledger.Currency}. Every refusal is a {@link dev.exactly.ledger.LedgerException}
 * with a stable {@code code()}. Two-phase entries ({@link dev.exactly.ledger.Ledger#hold}, then
 * capture or void) reserve amounts as pending. The schema ships as the migrations in {@code db/ledger}; see
 * {@link dev.exactly.ledger.LedgerSchema}.
 */
@NullMarked
package dev.exactly.ledger;

import org.jspecify.annotations.NullMarked;
