package dev.exactly.idempotency.client.intent;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A durable record of the keys of intents in progress: the key is written before the first byte of its
 * request is sent, so that a process that crashes and restarts resumes the intent with the same key and
 * the same bytes. Implementations make each method one atomic, durable step (a method returns once its
 * write would survive a crash), and are safe for concurrent use.
 */
public interface KeyJournal {

    /**
     * The entry of {@code candidate.intent()} if there is one; otherwise writes {@code candidate} durably
     * and returns it. Atomic: of two callers for one intent, both get the same entry.
     *
     * @throws KeyJournalException if the entry could not be written (then nothing may be sent) or an
     *                             existing entry could not be read
     */
    JournalEntry putIfAbsent(JournalEntry candidate);

    /** The entry of {@code intent}. */
    Optional<JournalEntry> find(IntentId intent);

    /**
     * Records the final answer of {@code intent}, if its entry still has {@code key}.
     *
     * @return false when there is no such entry
     */
    boolean finish(IntentId intent, String key, int status, Instant at);

    /** Entries without a final answer, oldest first: the intents to resume after a restart. */
    List<JournalEntry> pending();

    /**
     * Removes the entries finished before {@code cutoff}.
     *
     * @return how many were removed
     */
    int removeFinishedBefore(Instant cutoff);
}
