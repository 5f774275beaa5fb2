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
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A bounded store in this process's memory. Each transition is one {@link ConcurrentHashMap#compute};
 * waiters are woken in-process. Expired records are purged lazily, and in full sweeps when the store
 * reaches its bound; when it is full of live records, claims fail closed with
 * {@link StoreUnavailableException} rather than evicting a record that still guards a payment.
 *
 * <p>Use it for tests, and as the hot tier of a single process in front of a durable store. It is not
 * shared between processes.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {
    /** Default bound: 100 000 records. */
    public static final int DEFAULT_MAX_ENTRIES = 100_000;

    private final ConcurrentHashMap<ScopeKey, Entry> records = new ConcurrentHashMap<>();
    private final LocalWaiters waiters = new LocalWaiters();
    private final InstantSource clock;
    private final int maxEntries;
    private final AtomicLong lastSweepNanos = new AtomicLong();

    private InMemoryIdempotencyStore(InstantSource clock, int maxEntries) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries must be positive");
        }
        this.clock = Objects.requireNonNull(clock, "clock");
        this.maxEntries = maxEntries;
    }

    /** A store on the system clock with {@value #DEFAULT_MAX_ENTRIES} records at most. */
    public static InMemoryIdempotencyStore create() {
        return new InMemoryIdempotencyStore(InstantSource.system(), DEFAULT_MAX_ENTRIES);
    }

    public static InMemoryIdempotencyStore create(InstantSource clock, int maxEntries) {
        return new InMemoryIdempotencyStore(clock, maxEntries);
    }

    private record Entry(IdempotencyRecord record, Duration retention) {}

    @Override
    public ClaimOutcome claim(ScopeKey key, Fingerprint fingerprint, Duration lease, Duration retention) {
        if (records.size() >= maxEntries && !records.containsKey(key)) {
            sweep();
            if (records.size() >= maxEntries) {
                throw new StoreUnavailableException(
                        "in-memory idempotency store is full (" + maxEntries + " live records)", null);
            }
        }
        Instant now = clock.instant();
        ClaimOutcome[] result = new ClaimOutcome[1];
        records.compute(key, (k, existing) -> {
            if (existing == null || expired(existing, now)) {
                Entry created = processing(key, fingerprint, now, now, lease, retention);
                result[0] = new ClaimOutcome.Claimed(created.record(), false);
                return created;
            }
            IdempotencyRecord record = existing.record();
            if (record.status().isFinished()) {
                result[0] = new ClaimOutcome.Finished(record);
                return existing;
            }
            if (record.leaseExpired(now) && record.fingerprint().equals(fingerprint)) {
                Entry taken = processing(key, fingerprint, record.createdAt(), now, lease, retention);
                result[0] = new ClaimOutcome.Claimed(taken.record(), true);
                return taken;
            }
            result[0] = new ClaimOutcome.InFlight(record);
            return existing;
        });
        return result[0];
    }

    private static Entry processing(
            ScopeKey key, Fingerprint fingerprint, Instant createdAt, Instant now, Duration lease, Duration retention) {
        IdempotencyRecord record = new IdempotencyRecord(
                key, RecordStatus.PROCESSING, fingerprint, OwnerToken.random(), createdAt, now.plus(lease),
                now.plus(retention), null);
        return new Entry(record, retention);
    }

    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        if (!outcome.isFinished()) {
            throw new IllegalArgumentException("complete takes COMPLETED or FAILED");
        }
        Instant now = clock.instant();
        boolean[] done = new boolean[1];
        records.computeIfPresent(key, (k, existing) -> {
            if (!ownedBy(existing, owner, now)) {
                return existing;
            }
            IdempotencyRecord r = existing.record();
            done[0] = true;
            return new Entry(new IdempotencyRecord(key, outcome, r.fingerprint(), owner, r.createdAt(), null,
                    now.plus(existing.retention()), response), existing.retention());
        });
        if (done[0]) {
            waiters.signal(key);
        }
        return done[0];
    }

    @Override
    public boolean release(ScopeKey key, OwnerToken owner) {
        Instant now = clock.instant();
        boolean[] done = new boolean[1];
        records.computeIfPresent(key, (k, existing) -> {
            if (!ownedBy(existing, owner, now)) {
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
            if (!ownedBy(existing, owner, now)) {
                return existing;
            }
            IdempotencyRecord r = existing.record();
            done[0] = true;
            Instant leaseEnd = now.plus(lease);
            Instant expiresAt = r.expiresAt().isBefore(leaseEnd) ? leaseEnd : r.expiresAt();
            return new Entry(new IdempotencyRecord(key, r.status(), r.fingerprint(), owner, r.createdAt(), leaseEnd,
                    expiresAt, null), existing.retention());
        });
        return done[0];
    }

    /**
     * Owned means: processing, same token, not expired. An owner whose lease ran out still owns the
     * record until somebody takes it over (nobody else needed it), as in every other store.
     */
    private static boolean ownedBy(Entry entry, OwnerToken owner, Instant now) {
        IdempotencyRecord r = entry.record();
        return r.status() == RecordStatus.PROCESSING && owner.equals(r.owner()) && !expired(entry, now);
    }

    private static boolean expired(Entry entry, Instant now) {
        return !now.isBefore(entry.record().expiresAt());
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        Entry entry = records.get(key);
        if (entry == null) {
            return Optional.empty();
        }
        if (expired(entry, clock.instant())) {
            records.remove(key, entry);
            return Optional.empty();
        }
        return Optional.of(entry.record());
    }

    @Override
    public ChangeSubscription subscribe(ScopeKey key) {
        return waiters.subscribe(key);
    }

    /** Removes every expired record; returns how many. */
    public int purgeExpired() {
        Instant now = clock.instant();
        int[] removed = new int[1];
        records.forEach((key, entry) -> {
            if (expired(entry, now) && records.remove(key, entry)) {
                removed[0]++;
            }
        });
        return removed[0];
    }

    /** Sweeps at most once per 100 ms, so that a full store does not sweep on every claim. */
    private void sweep() {
        long now = System.nanoTime();
        long last = lastSweepNanos.get();
        if (now - last > 100_000_000L && lastSweepNanos.compareAndSet(last, now)) {
            purgeExpired();
        }
    }

    /** The number of records held, expired or not. */
    public int size() {
        return records.size();
    }

    @Override
    public String toString() {
        return "InMemoryIdempotencyStore[" + records.size() + "/" + maxEntries + "]";
    }

}
