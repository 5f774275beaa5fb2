package dev.exactly.idempotency.client.intent;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** A journal in memory: for tests and for processes that accept losing their keys with the process. */
public final class InMemoryKeyJournal implements KeyJournal {
    private final ConcurrentMap<IntentId, JournalEntry> entries = new ConcurrentHashMap<>();

    /** An empty journal. */
    public InMemoryKeyJournal() {}

    @Override
    public JournalEntry putIfAbsent(JournalEntry candidate) {
        Objects.requireNonNull(candidate, "candidate");
        JournalEntry existing = entries.putIfAbsent(candidate.intent(), candidate);
        return existing == null ? candidate : existing;
    }

    @Override
    public Optional<JournalEntry> find(IntentId intent) {
        return Optional.ofNullable(entries.get(intent));
    }

    @Override
    public boolean finish(IntentId intent, String key, int status, Instant at) {
        AtomicBoolean done = new AtomicBoolean();
        entries.computeIfPresent(intent, (k, e) -> {
            if (!e.key().equals(key)) {
                return e;
            }
            done.set(true);
            return e.finish(status, at);
        });
        return done.get();
    }

    @Override
    public List<JournalEntry> pending() {
        return entries.values().stream()
                .filter(e -> !e.finished())
                .sorted(Comparator.comparing(JournalEntry::createdAt))
                .toList();
    }

    @Override
    public int removeFinishedBefore(Instant cutoff) {
        AtomicInteger removed = new AtomicInteger();
        for (IntentId intent : List.copyOf(entries.keySet())) {
            entries.computeIfPresent(intent, (k, e) -> {
                Instant finished = e.finishedAt();
                if (finished != null && finished.isBefore(cutoff)) {
                    removed.incrementAndGet();
                    return null;
                }
                return e;
            });
        }
        return removed.get();
    }

    /** How many entries there are. */
    public int size() {
        return entries.size();
    }
}
