package dev.exactly.payments.keys;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable idempotency tier: PostgreSQL records ({@link PostgresIdempotencyStore}) claimed and
 * finished on the caller's connection, so that a record's final state commits in the same transaction as
 * the charge row and the journal entry. Also the one place that turns records into answers.
 */
public final class DurableTier implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DurableTier.class);
    /** The route template of charge creation, part of every charge scope. */
    public static final String CHARGES_ROUTE = "/v1/charges";
    /** The route template of refund creation. */
    public static final String REFUNDS_ROUTE = "/v1/refunds";

    private static final String REPLAYS = "SELECT replays FROM payments_replay WHERE scope_key = ?";

    private final PostgresIdempotencyStore store;
    private final Jdbc jdbc;
    private final Fingerprinter fingerprinter = Fingerprinter.ofDefaults();
    private final Duration lease;
    private final Duration retention;
    private final KeepAlive keepAlive;
    private final InstantSource clock;
    private final ReplayCounter replayCounter;

    /**
     * @param lease     how long a record stays held after its owner's last renewal
     * @param keepAlive how an owner's lease is renewed while it works ({@link #keepAlive})
     */
    public DurableTier(PostgresIdempotencyStore store, Jdbc jdbc, Duration lease, Duration retention,
            KeepAlive keepAlive, InstantSource clock) {
        this.store = store;
        this.jdbc = jdbc;
        this.lease = lease;
        this.retention = retention;
        this.keepAlive = keepAlive;
        this.clock = clock;
        this.replayCounter = new ReplayCounter(jdbc);
    }

    public PostgresIdempotencyStore store() {
        return store;
    }

    /** Writes the queued replay counts and stops the store's listener connection. */
    @Override
    public void close() {
        replayCounter.close();
        store.close();
    }

    public Duration lease() {
        return lease;
    }

    /** The scope key of a POST on {@code route} by {@code tenant} with {@code key}. */
    public static ScopeKey scopeKey(String tenant, String route, IdempotencyKey key) {
        return new Scope(tenant, "POST", route, key).toScopeKey();
    }

    /** The fingerprint of a POST body, computed as the hot tier computes it. */
    public Fingerprint fingerprint(String route, byte[] body, @Nullable String contentType) {
        return fingerprinter.fingerprint("POST", route, body, contentType);
    }

    /** Claims the key in the caller's transaction. */
    public ClaimOutcome claim(Connection c, ScopeKey key, Fingerprint fingerprint) {
        return store.claim(c, key, fingerprint, lease, retention);
    }

    /**
     * Keeps the owner's lease alive until closed: renewed every third of the lease in a short statement of
     * its own (owner-fenced), for at most the keep-alive's max hold. Whoever claims a record holds one
     * around its long steps (the processor call, phase 3), so that a slow processor never lets recovery
     * take the record over and call the processor a second time, while a dead or frozen owner still loses
     * the record one lease after its last renewal.
     */
    public LeaseKeeper keepAlive(ScopeKey key, OwnerToken owner) {
        return LeaseKeeper.start(store, key, owner, lease, keepAlive, result -> {
            switch (result) {
                case RENEWED -> { }
                case LOST -> log.warn("durable record {}: a renewal was refused (the record was just finished, or "
                        + "another owner took it over; then this owner's writes are refused)", key);
                case FAILED -> log.warn("durable record {}: the lease could not be renewed (database unreachable); "
                        + "retrying", key);
                case MAX_HOLD -> log.warn("durable record {}: held for {} by one owner; no longer renewed", key,
                        keepAlive.maxHold());
            }
        });
    }

    /** Finishes the owner's record in the caller's transaction; false: the owner lost it (roll back). */
    public boolean complete(Connection c, ScopeKey key, OwnerToken owner, ApiResponse response) {
        RecordStatus status = response.status() < 400 ? RecordStatus.COMPLETED : RecordStatus.FAILED;
        return store.complete(c, key, owner, status, stored(response));
    }

    /** Records the owner's progress in the caller's transaction; false: the owner lost the record. */
    public boolean recoveryPoint(Connection c, ScopeKey key, OwnerToken owner, String point) {
        return store.updateRecoveryPoint(c, key, owner, point);
    }

    /**
     * Hands the owner's record over to recovery after {@code delay}: the lease then ends, and the worker
     * (or a retry) takes the record over.
     */
    public boolean handOver(Connection c, ScopeKey key, OwnerToken owner, Duration delay) {
        return store.renew(c, key, owner, delay);
    }

    /** The answer for an existing record that did not let this request claim it. */
    public ApiResponse answerExisting(ClaimOutcome outcome, Fingerprint fingerprint) {
        IdempotencyRecord record = outcome.record();
        if (!record.fingerprint().equals(fingerprint)) {
            return ApiProblems.keyReused();
        }
        if (outcome instanceof ClaimOutcome.Finished) {
            StoredResponse stored = record.response();
            if (stored == null) {
                throw new IllegalStateException("a finished record carries its response");
            }
            countReplay(record.key());
            return replay(stored);
        }
        Instant leaseEnd = record.leaseExpiresAt();
        Duration left = leaseEnd == null ? Duration.ZERO : Duration.between(clock.instant(), leaseEnd);
        return ApiProblems.keyInUse(left.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : left);
    }

    /** The answer recorded on a charge or refund row, replayed (the row outlives the record). */
    public ApiResponse replayRow(ScopeKey key, ApiResponse recorded) {
        countReplay(key);
        return recorded.asReplay();
    }

    /**
     * Counts one replay of a scope (either tier), for the key status endpoint: queued and written by
     * {@link ReplayCounter}'s own thread, so a request never takes a second connection for it.
     */
    public void countReplay(ScopeKey key) {
        replayCounter.count(key.hash());
    }

    /** How often a scope was replayed. */
    public long replays(ScopeKey key) {
        return jdbc.queryOne(REPLAYS, s -> s.setString(1, key.hash()), rs -> rs.getLong(1)).orElse(0L);
    }

    /** The record of a scope, if it has not expired, with its recovery point. */
    public Optional<RecordWithPoint> find(ScopeKey key) {
        return jdbc.inTransaction(c -> store.find(c, key)
                .map(r -> new RecordWithPoint(r, store.findRecoveryPoint(c, key).orElse(null))));
    }

    /** A record and its recovery point. */
    public record RecordWithPoint(IdempotencyRecord record, @Nullable String recoveryPoint) {}

    static StoredResponse stored(ApiResponse response) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("content-type", List.of(response.contentType()));
        if (response.location() != null) {
            headers.put("location", List.of(response.location()));
        }
        return new StoredResponse(response.status(), headers, response.body());
    }

    static ApiResponse replay(StoredResponse stored) {
        List<String> type = stored.headers().getOrDefault("content-type", List.of(ApiResponse.JSON));
        List<String> location = stored.headers().get("location");
        return new ApiResponse(stored.status(), type.getFirst(), location == null ? null : location.getFirst(),
                stored.body(), true, true, null);
    }
}
