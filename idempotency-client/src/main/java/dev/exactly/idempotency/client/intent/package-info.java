/**
 * Keys that survive a crash: an {@link dev.exactly.idempotency.client.intent.IntentClient} mints a key
 * for a new intent and writes it, with the exact request, to a durable
 * {@link dev.exactly.idempotency.client.intent.KeyJournal} before the first byte is sent; after a
 * restart the same intent finds the same key and the same bytes. Journals: a directory of files
 * (fsync and atomic rename), a JDBC table, and memory (tests).
 */
@NullMarked
package dev.exactly.idempotency.client.intent;

import org.jspecify.annotations.NullMarked;
