package dev.exactly.idempotency.memory;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spi.LocalWaiters;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A bounded store in this process's memory. Each transition is one {@link ConcurrentHashMap#compute};
 * a claim of a key the map does not hold is one {@link ConcurrentHashMap#putIfAbsent}, and a replay of a
 * finished record (immutable until it expires) is a plain, lock-free read. Waiters are
 * woken in-process. Expired records are purged lazily, and in full sweeps when the store
 * reaches its bound, at most ten a second and none before the earliest expiry of its records: a store full
 * of live records refuses a claim without reading them.
 *
 * <h2>When it is full</h2>
 * What a full store does depends on what stands behind it ({@link Builder#whenFull}):
 * <ul>
 *   <li>{@link WhenFull#REFUSE} (the default, for a store that is the only record of its keys): claims
 *       of new keys fail closed with {@link StoreUnavailableException} until records expire; nothing that
 *       still guards an outcome is ever evicted. {@link #stats()} reports the refusals, and health
 *       indicators show the store as full.</li>
 *   <li>{@link WhenFull#EVICT_FINISHED} (for the hot tier in front of a durable store that keeps every
 *       outcome, such as PostgreSQL): finished records are evicted oldest-finished first to make room; a
 *       retry of an evicted key is answered by the durable tier. Processing records are never evicted:
 *       if they alone fill the store, claims of new keys fail closed as above.</li>
 * </ul>
 *
 * <p>Use it for tests, and as the hot tier of a single process in front of a durable store. It is not
 * shared between processes.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {
    /** Default bound: 100 000 records. */
    public static final int DEFAULT_MAX_ENTRIES = 100_000;

    /** What a full store does with a claim of a new key. */
    public enum WhenFull {
        /** Refuse it (fail closed): every record is the only record of its outcome. */
        REFUSE,
        /** Evict finished records, oldest-finished first; refuse only if processing records fill the store. */
        EVICT_FINISHED
    }

    /**
     * A snapshot of the store's occupancy.
     *
     * @param size          records held (expired ones not yet purged included)
     * @param maxEntries    the bound
     * @param whenFull      what a full store does
     * @param evictions     finished records evicted to make room, since creation
     * @param refusals      claims refused because the store was full, since creation
     * @param lastRefusalAt when a claim was last refused, if ever
     * @param refusing      whether the last claim of a new key was refused (the store is full now)
     */
    public record Stats(
            int size,
            int maxEntries,
            WhenFull whenFull,
            long evictions,
            long refusals,
            @Nullable Instant lastRefusalAt,
            boolean refusing) {}

    private final ConcurrentHashMap<ScopeKey, Entry> records = new ConcurrentHashMap<>();
    private final LocalWaiters waiters = new LocalWaiters();
    private final InstantSource clock;
    private final int maxEntries;
    private final WhenFull whenFull;
    private final AtomicLong lastSweepNanos = new AtomicLong(System.nanoTime() - 1_000_000_000L);
    /**
     * No record held expires before this (epoch milliseconds; a lower bound): until then a full store has
     * nothing to purge, and does not read its records to find that out. Lowered by every record created or
     * taken over (nothing else sets an earlier expiry: a completion and a renewal only move it later); set by
     * each sweep to the earliest expiry it left.
     */
    private final AtomicLong earliestExpiry = new AtomicLong(Long.MAX_VALUE);

    private final LongAdder sweeps = new LongAdder();
    /** Finished records in the order they finished: the eviction order. May hold stale references. */
    private final ConcurrentLinkedQueue<Finished> finishedOrder = new ConcurrentLinkedQueue<>();

    private final AtomicInteger finishedOrderSize = new AtomicInteger();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder refusals = new LongAdder();
    private volatile @Nullable Instant lastRefusalAt;
    private volatile boolean refusing;

    private InMemoryIdempotencyStore(Builder builder) {
        this.clock = builder.clock;
        this.maxEntries = builder.maxEntries;
        this.whenFull = builder.whenFull;
    }

    /** A store on the system clock with {@value #DEFAULT_MAX_ENTRIES} records at most, refusing when full. */
    public static InMemoryIdempotencyStore create() {
        return builder().build();
    }

    /** A store refusing new keys when full. */
    public static InMemoryIdempotencyStore create(InstantSource clock, int maxEntries) {
        return builder().clock(clock).maxEntries(maxEntries).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * What the store holds for a key: a {@link Processing} record, or a finished one {@linkplain PackedRecord
     * packed} into a few objects for the rest of its retention.
     */
    sealed interface Entry permits Processing, PackedRecord {
        /** Whether the record has expired at {@code now}. */
        boolean expired(Instant now);

        /** When it expires, epoch milliseconds ({@link Long#MAX_VALUE} past what a long of them holds). */
        long expiresAtMillis();
    }

    /** A record being processed, with the retention its completion will keep it for. */
    record Processing(IdempotencyRecord record, Duration retention) implements Entry {
        @Override
        public boolean expired(Instant now) {
            return !now.isBefore(record.expiresAt());
        }

        @Override
        public long expiresAtMillis() {
            return millis(record.expiresAt());
        }
    }

    /** A finished entry, as it was when it finished: evicted only if it is still exactly that entry. */
    private record Finished(ScopeKey key, Entry entry) {}

    @Override
    public ClaimOutcome claim(
            ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
        Objects.requireNonNull(owner, "owner");
        Entry seen = records.get(key);
        if (seen instanceof PackedRecord finished) {
            // a finished record never changes until it expires: a replay needs no lock (no compute)
            if (!finished.expired(clock.instant())) {
                return new ClaimOutcome.Finished(finished.record(key));
            }
        }
        if (records.size() >= maxEntries && seen == null) {
            makeRoom();
        }
        if (refusing) {
            refusing = false;
        }
        Instant now = clock.instant();
        if (seen == null) {
            // a key the map did not hold: one insert-if-absent claims it (a CAS when its bin is empty, as most are;
            // no lambda); if another claim inserted it in between, the compute below decides
            Processing created = processing(key, fingerprint, owner, now, now, lease, retention);
            if (records.putIfAbsent(key, created) == null) {
                noteExpiry(millis(created.record().expiresAt()));
                return new ClaimOutcome.Claimed(created.record(), false);
            }
        }
        ClaimOutcome[] result = new ClaimOutcome[1];
        records.compute(key, (k, existing) -> {
            if (existing == null || existing.expired(now)) {
                Processing created = processing(key, fingerprint, owner, now, now, lease, retention);
                result[0] = new ClaimOutcome.Claimed(created.record(), false);
                return created;
            }
            if (existing instanceof PackedRecord finished) {
                result[0] = new ClaimOutcome.Finished(finished.record(key));
                return existing;
            }
            IdempotencyRecord record = ((Processing) existing).record();
            if (record.leaseExpired(now) && record.fingerprint().equals(fingerprint)) {
                Processing taken = processing(key, fingerprint, owner, record.createdAt(), now, lease, retention);
                result[0] = new ClaimOutcome.Claimed(taken.record(), true);
                return taken;
            }
            result[0] = new ClaimOutcome.InFlight(record);
            return existing;
        });
        if (result[0] instanceof ClaimOutcome.Claimed claimed) {
            noteExpiry(millis(claimed.record().expiresAt()));
        }
        return result[0];
    }

    /** Purges expired records, evicts finished ones if allowed, and refuses the claim if still full. */
    private void makeRoom() {
        sweep();
        if (whenFull == WhenFull.EVICT_FINISHED) {
            while (records.size() >= maxEntries) {
                Finished oldest = finishedOrder.poll();
                if (oldest == null) {
                    break;
                }
                finishedOrderSize.decrementAndGet();
                if (records.remove(oldest.key(), oldest.entry())) {
                    evictions.increment();
                }
            }
        }
        if (records.size() >= maxEntries) {
            refusals.increment();
            lastRefusalAt = clock.instant();
            refusing = true;
            throw StoreUnavailableException.refused(
                    whenFull == WhenFull.EVICT_FINISHED
                            ? "in-memory idempotency store is full of in-flight records (" + maxEntries + ")"
                            : "in-memory idempotency store is full (" + maxEntries + " live records)");
        }
    }

    private static Processing processing(
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            Instant createdAt,
            Instant now,
            Duration lease,
            Duration retention) {
        IdempotencyRecord record = new IdempotencyRecord(
                key,
                RecordStatus.PROCESSING,
                fingerprint,
                owner,
                createdAt,
                now.plus(lease),
                now.plus(retention),
                null);
        return new Processing(record, retention);
    }

    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        if (!outcome.isFinished()) {
            throw new IllegalArgumentException("complete takes COMPLETED or FAILED");
        }
        Instant now = clock.instant();
        PackedRecord[] done = new PackedRecord[1];
        records.computeIfPresent(key, (k, existing) -> {
            if (!(existing instanceof Processing processing) || !ownedBy(processing, owner, now)) {
                return existing;
            }
            IdempotencyRecord r = processing.record();
            done[0] = PackedRecord.of(new IdempotencyRecord(
                    key,
                    outcome,
                    r.fingerprint(),
                    owner,
                    r.createdAt(),
                    null,
                    now.plus(processing.retention()),
                    response));
            return done[0];
        });
        if (done[0] == null) {
            return false;
        }
        rememberFinished(key, done[0]);
        waiters.signal(key);
        return true;
    }

    @Override
    public boolean release(ScopeKey key, OwnerToken owner) {
        Instant now = clock.instant();
        boolean[] done = new boolean[1];
        records.computeIfPresent(key, (k, existing) -> {
            if (!(existing instanceof Processing processing) || !ownedBy(processing, owner, now)) {
                return existing;
            }
            done[0] = true;
            return null;
        });
        if (done[0]) {
            waiters.signal(key);
        }
        return done[0];
    }

    @Override
    public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
        Instant now = clock.instant();
        boolean[] done = new boolean[1];
        records.computeIfPresent(key, (k, existing) -> {
            if (!(existing instanceof Processing processing) || !ownedBy(processing, owner, now)) {
                return existing;
            }
            IdempotencyRecord r = processing.record();
            done[0] = true;
            Instant leaseEnd = now.plus(lease);
            Instant expiresAt = r.expiresAt().isBefore(leaseEnd) ? leaseEnd : r.expiresAt();
            return new Processing(
                    new IdempotencyRecord(
                            key, r.status(), r.fingerprint(), owner, r.createdAt(), leaseEnd, expiresAt, null),
                    processing.retention());
        });
        return done[0];
    }

    /**
     * Owned means: same token, not expired (a processing entry is processing). An owner whose lease ran out
     * still owns the record until somebody takes it over (nobody else needed it), as in every other store.
     */
    private static boolean ownedBy(Processing entry, OwnerToken owner, Instant now) {
        return owner.equals(entry.record().owner()) && !entry.expired(now);
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        Entry entry = records.get(key);
        if (entry == null) {
            return Optional.empty();
        }
        if (entry.expired(clock.instant())) {
            records.remove(key, entry);
            return Optional.empty();
        }
        return Optional.of(
                switch (entry) {
                    case Processing processing -> processing.record();
                    case PackedRecord finished -> finished.record(key);
                });
    }

    @Override
    public ChangeSubscription subscribe(ScopeKey key) {
        return waiters.subscribe(key);
    }

    /** Removes every expired record; returns how many. */
    public int purgeExpired() {
        sweeps.increment();
        Instant now = clock.instant();
        int[] removed = new int[1];
        // before the reads: a record created meanwhile lowers it again, whether the reads see it or not
        earliestExpiry.set(Long.MAX_VALUE);
        records.forEach((key, entry) -> {
            if (entry.expired(now)) {
                if (records.remove(key, entry)) {
                    removed[0]++;
                }
            } else {
                noteExpiry(entry.expiresAtMillis());
            }
        });
        return removed[0];
    }

    /**
     * Sweeps at most once per 100 ms, so that a full store does not sweep on every claim, and only once the
     * earliest expiry has passed: a store full of live records refuses a claim without reading them all (a
     * bound of millions took a sweep of tens of milliseconds, ten times a second, while it refused).
     */
    private void sweep() {
        if (clock.millis() < earliestExpiry.get()) {
            return;
        }
        long now = System.nanoTime();
        long last = lastSweepNanos.get();
        if (now - last > 100_000_000L && lastSweepNanos.compareAndSet(last, now)) {
            purgeExpired();
        }
    }

    private void noteExpiry(long at) {
        if (at < earliestExpiry.get()) {
            earliestExpiry.accumulateAndGet(at, Math::min);
        }
    }

    /** Epoch milliseconds, {@link Long#MAX_VALUE} past what a long of them holds (never the earliest expiry). */
    private static long millis(Instant at) {
        try {
            return at.toEpochMilli();
        } catch (ArithmeticException beyondMillis) {
            return Long.MAX_VALUE;
        }
    }

    /** How many times the records were read to purge the expired ones, since creation. */
    long sweeps() {
        return sweeps.sum();
    }

    /**
     * Appends a finished entry to the eviction order. References to entries that are gone (expired,
     * purged, evicted) are dropped from the front as they come up; should they pile up behind a live
     * one (mixed retentions), one pass removes them all, at most once per {@code maxEntries} completions.
     */
    @SuppressWarnings("ReferenceEquality") // identity: is the entry remembered still the one in the map
    private void rememberFinished(ScopeKey key, Entry entry) {
        if (whenFull != WhenFull.EVICT_FINISHED) {
            return;
        }
        finishedOrder.add(new Finished(key, entry));
        if (finishedOrderSize.incrementAndGet() <= maxEntries) {
            return;
        }
        Finished head;
        while ((head = finishedOrder.peek()) != null && records.get(head.key()) != head.entry()) {
            if (finishedOrder.remove(head)) {
                finishedOrderSize.decrementAndGet();
            }
        }
        if (finishedOrderSize.get() > 2 * maxEntries) {
            int[] removed = new int[1];
            finishedOrder.removeIf(f -> {
                boolean stale = records.get(f.key()) != f.entry();
                if (stale) {
                    removed[0]++;
                }
                return stale;
            });
            finishedOrderSize.addAndGet(-removed[0]);
        }
    }

    /** Occupancy, evictions and refusals, for health indicators and meters. */
    public Stats stats() {
        return new Stats(
                records.size(), maxEntries, whenFull, evictions.sum(), refusals.sum(), lastRefusalAt, refusing);
    }

    /** The number of records held, expired or not. */
    public int size() {
        return records.size();
    }

    @Override
    public String toString() {
        return "InMemoryIdempotencyStore[" + records.size() + "/" + maxEntries + ", when full: " + whenFull + "]";
    }

    /** Validating builder: system clock, {@value #DEFAULT_MAX_ENTRIES} records, {@link WhenFull#REFUSE}. */
    public static final class Builder {
        private InstantSource clock = InstantSource.system();
        private int maxEntries = DEFAULT_MAX_ENTRIES;
        private WhenFull whenFull = WhenFull.REFUSE;

        private Builder() {}

        /** The clock of leases and retention. */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The most records held at once (processing and finished). */
        public Builder maxEntries(int maxEntries) {
            if (maxEntries <= 0) {
                throw new IllegalArgumentException("maxEntries must be positive");
            }
            this.maxEntries = maxEntries;
            return this;
        }

        /**
         * What a full store does with a new key: {@link WhenFull#REFUSE} unless a durable store keeps
         * every outcome behind this one.
         */
        public Builder whenFull(WhenFull whenFull) {
            this.whenFull = Objects.requireNonNull(whenFull, "whenFull");
            return this;
        }

        public InMemoryIdempotencyStore build() {
            return new InMemoryIdempotencyStore(this);
        }
    }
}
