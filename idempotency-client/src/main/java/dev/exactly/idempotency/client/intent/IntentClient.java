package dev.exactly.idempotency.client.intent;

import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotencyKeys;
import dev.exactly.idempotency.client.IdempotentHttpClient;
import dev.exactly.idempotency.client.IdempotentRequest;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Sends intents with journaled keys: the first {@link #send} of an intent mints a random key and writes
 * it, with the exact request, to the {@link KeyJournal} <em>before the first byte is sent</em>; every
 * later send of the same intent, in this process or after a crash and restart, finds the entry and sends
 * the same bytes with the same key. A final answer marks the entry finished; it is removed once the
 * retention has passed (then the intent id is free again, as the server forgets the key after its own
 * retention). An intent whose retries ran out stays pending: {@link #pending()} lists it and
 * {@link #resume} sends it again.
 *
 * <pre>{@code
 * IntentClient intents = IntentClient.create(client, FileKeyJournal.open(Path.of("var/keys")));
 * IdempotentResponse answer = intents.send(IntentId.of("checkout", orderId),
 *         IdempotentRequest.builder("POST", chargesUri).header("Authorization", "Bearer " + apiKey)
 *                 .header("Content-Type", "application/json").body(json).build());
 * }</pre>
 *
 * Credential headers ({@code Authorization}, {@code Proxy-Authorization}, {@code Cookie}) are never
 * journaled: {@link #resume} takes them again.
 */
public final class IntentClient {
    /** Default retention of finished entries: 24 hours, as long as servers replay keys by default. */
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);
    /** Finished entries are purged at most this often, after a final answer. */
    private static final Duration PURGE_INTERVAL = Duration.ofMinutes(1);

    private final IdempotentHttpClient client;
    private final KeyJournal journal;
    private final Duration retention;
    private final InstantSource clock;
    private final Supplier<String> keys;
    private final AtomicReference<Instant> nextPurge = new AtomicReference<>(Instant.MIN);

    private IntentClient(Builder b) {
        this.client = b.client;
        this.journal = b.journal;
        this.retention = b.retention;
        this.clock = b.clock;
        this.keys = b.keys;
    }

    /** An intent client with the defaults: 24 h retention, random UUID keys, the system clock. */
    public static IntentClient create(IdempotentHttpClient client, KeyJournal journal) {
        return builder(client, journal).build();
    }

    public static Builder builder(IdempotentHttpClient client, KeyJournal journal) {
        return new Builder(client, journal);
    }

    public KeyJournal journal() {
        return journal;
    }

    /**
     * Sends the intent: with its journaled key and bytes if it has an entry, else with a new key written to
     * the journal first.
     *
     * @param intent  the logical intent
     * @param request what to send; its credential headers go out but are not journaled
     * @return the final answer (the entry is then finished)
     * @throws IllegalArgumentException      the intent is journaled with a different request (method,
     *                                       targets or body): an intent names one request
     * @throws KeyJournalException           the key could not be written (nothing was sent) or its entry
     *                                       could not be read
     * @throws RetriesExhaustedException     no final answer yet: the entry stays pending; send or resume
     *                                       later, the same key will go out
     * @throws IdempotencyKeyReusedException the server knows the key from a different request
     * @throws IntentExpiredException        the intent has been pending for longer than the retention: it
     *                                       is not sent again (a server may have run it and forgotten the key)
     * @throws InterruptedException          interrupted while waiting; the entry stays pending
     */
    public IdempotentResponse send(IntentId intent, IdempotentRequest request) throws InterruptedException {
        Objects.requireNonNull(intent, "intent");
        Objects.requireNonNull(request, "request");
        Instant now = now();
        JournalEntry candidate = JournalEntry.pending(intent, IdempotencyKeys.requireValid(keys.get()), request, now);
        JournalEntry entry = journal.putIfAbsent(candidate);
        if (expired(entry, now)) {
            journal.removeFinishedBefore(now.minus(retention));
            entry = journal.putIfAbsent(candidate);
        }
        if (!entry.request().sameRequestAs(request)) {
            throw new IllegalArgumentException("intent " + intent + " is journaled with a different request ("
                    + entry.request() + "), not " + request + ": an intent names one request; use a new intent id "
                    + "for a different one");
        }
        return send(entry, request.headers());
    }

    /**
     * Sends a journaled intent again, with its key and bytes, if it has an entry (typically one of
     * {@link #pending()} after a restart).
     *
     * @param credentials headers to add that the journal does not keep, e.g.
     *                    {@code Map.of("Authorization", "Bearer sk_…")}
     * @return the final answer, or empty when the intent has no entry
     */
    public Optional<IdempotentResponse> resume(IntentId intent, Map<String, String> credentials)
            throws InterruptedException {
        Objects.requireNonNull(credentials, "credentials");
        Optional<JournalEntry> entry = journal.find(intent);
        if (entry.isEmpty() || expired(entry.get(), now())) {
            return Optional.empty();
        }
        Map<String, List<String>> extra = new java.util.TreeMap<>();
        credentials.forEach((name, value) -> extra.put(name.toLowerCase(Locale.ROOT), List.of(value)));
        return Optional.of(send(entry.get(), extra));
    }

    /** Intents without a final answer, oldest first: resume them after a restart. */
    public List<JournalEntry> pending() {
        return journal.pending();
    }

    /** Removes entries finished longer ago than the retention; returns how many. */
    public int purgeExpired() {
        return journal.removeFinishedBefore(now().minus(retention));
    }

    private IdempotentResponse send(JournalEntry entry, Map<String, List<String>> callerHeaders)
            throws InterruptedException {
        if (!entry.finished() && entry.createdAt().isBefore(now().minus(retention))) {
            throw new IntentExpiredException(entry, retention);
        }
        IdempotentRequest.Builder outgoing = entry.request().toBuilder();
        callerHeaders.forEach((name, values) -> {
            if (IdempotentRequest.CREDENTIAL_HEADERS.contains(name)) {
                values.forEach(v -> outgoing.header(name, v));
            }
        });
        IdempotentResponse answer;
        try {
            answer = client.send(outgoing.build(), entry.key());
        } catch (IdempotencyKeyReusedException reused) {
            finish(entry, reused.answer().status());
            throw reused;
        }
        finish(entry, answer.status());
        purgeNowAndThen();
        return answer;
    }

    /**
     * Marks the entry finished, never at the cost of the answer in hand: a journal that cannot write now (a
     * database away, a file lock refused) leaves the entry pending, and its next send or resume gets the same
     * answer from the server as a replay. The journal's I/O runs with the thread's interrupt status cleared
     * (an interrupted thread cannot take a file lock), which is restored after it.
     */
    private void finish(JournalEntry entry, int status) {
        boolean interrupted = Thread.interrupted();
        try {
            journal.finish(entry.intent(), entry.key(), status, now());
        } catch (KeyJournalException e) {
            // the entry stays pending: the answer stands
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean expired(JournalEntry entry, Instant now) {
        Instant finished = entry.finishedAt();
        return finished != null && finished.isBefore(now.minus(retention));
    }

    private void purgeNowAndThen() {
        Instant now = now();
        Instant next = nextPurge.get();
        if (now.isBefore(next) || !nextPurge.compareAndSet(next, now.plus(PURGE_INTERVAL))) {
            return;
        }
        try {
            purgeExpired();
        } catch (KeyJournalException e) {
            // a purge that fails now runs again later; the answer stands
        }
    }

    /** Millisecond precision: what every journal stores exactly. */
    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    /** Validating builder. */
    public static final class Builder {
        private final IdempotentHttpClient client;
        private final KeyJournal journal;
        private Duration retention = DEFAULT_RETENTION;
        private InstantSource clock = InstantSource.system();
        private Supplier<String> keys = IdempotencyKeys::mint;

        private Builder(IdempotentHttpClient client, KeyJournal journal) {
            this.client = Objects.requireNonNull(client, "client");
            this.journal = Objects.requireNonNull(journal, "journal");
        }

        /**
         * How long a finished entry is kept (and a repeated send of its intent reuses its key). Keep it no
         * longer than the server replays keys.
         */
        public Builder retention(Duration retention) {
            Objects.requireNonNull(retention, "retention");
            if (retention.isNegative() || retention.isZero()) {
                throw new IllegalArgumentException("retention must be positive");
            }
            this.retention = retention;
            return this;
        }

        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Where new keys come from (default: {@link IdempotencyKeys#mint()}, random UUIDs). */
        public Builder keys(Supplier<String> keys) {
            this.keys = Objects.requireNonNull(keys, "keys");
            return this;
        }

        public IntentClient build() {
            return new IntentClient(this);
        }
    }
}
