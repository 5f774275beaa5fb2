package dev.exactly.idempotency.redis;

import static dev.exactly.idempotency.redis.RedisStoreTestSupport.binaryBody;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.binaryResponse;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.fingerprint;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.randomKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.redis.internal.HeaderCodec;
import dev.exactly.idempotency.redis.internal.LuaScript;
import dev.exactly.idempotency.redis.internal.RecordValue;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import io.lettuce.core.KillArgs;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Focused tests of the Redis store's scripts, TTLs, fencing and pub/sub, run on each topology by a
 * subclass. Every test uses fresh random keys under a prefix of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractRedisStoreTest {
    protected static final Duration LEASE = Duration.ofSeconds(30);
    protected static final Duration RETENTION = Duration.ofSeconds(60);
    /**
     * How far the times a store writes may be from the server's clock: the store estimates it from
     * {@code TIME} (off by half a round trip and a millisecond of rounding); generous for a loaded machine.
     */
    protected static final long CLOCK_TOLERANCE_MILLIS = 250;

    protected final RedisStoreConfig config = RedisStoreConfig.custom()
            .keyPrefix(RedisStoreTestSupport.uniquePrefix())
            .build();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private RedisIdempotencyStore store;
    private RedisIdempotencyStore otherStore;

    /** A store with a client (and connections) of its own, whose connections carry {@code clientName}. */
    protected abstract RedisIdempotencyStore newStore(RedisStoreConfig config, String clientName);

    /** Plain string commands, routed by key. */
    protected abstract RedisClusterCommands<String, String> admin();

    /** Runs {@code action} on a direct connection to every server. */
    protected abstract void onEveryNode(Consumer<RedisCommands<String, String>> action);

    /** {@code SCRIPT EXISTS} on the server that holds {@code key}. */
    protected abstract List<Boolean> scriptsCachedFor(String key, String... sha1s);

    /** Closed after the class, last registered first. */
    protected final <T extends AutoCloseable> T register(T resource) {
        resources.add(resource);
        return resource;
    }

    @AfterAll
    void closeResources() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    protected final RedisIdempotencyStore store() {
        if (store == null) {
            store = register(newStore(config, "exactly-test-main"));
        }
        return store;
    }

    /** A second instance on the same Redis, as another process would be. */
    protected final RedisIdempotencyStore otherStore() {
        if (otherStore == null) {
            otherStore = register(newStore(config, "exactly-test-other"));
        }
        return otherStore;
    }

    private String redisKey(ScopeKey key) {
        return config.recordKey(key);
    }

    /** A number as the record's fixed-width fields hold it. */
    static String fixed(long value) {
        return String.format("%013d", value);
    }

    protected long serverMillis() {
        List<String> time = admin().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }

    private ClaimOutcome.Claimed claim(ScopeKey key, Fingerprint fingerprint) {
        ClaimOutcome outcome = store().claim(key, fingerprint, LEASE, RETENTION);
        assertThat(outcome).isInstanceOf(ClaimOutcome.Claimed.class);
        return (ClaimOutcome.Claimed) outcome;
    }

    @Test
    void claimCreatesAProcessingHashOnServerTimeWithTheRetentionAsTtl() {
        ScopeKey key = randomKey();
        long before = serverMillis();
        ClaimOutcome.Claimed claimed = claim(key, fingerprint("a"));
        long after = serverMillis();

        IdempotencyRecord record = claimed.record();
        assertThat(claimed.takeover()).isFalse();
        assertThat(record.status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(record.fingerprint()).isEqualTo(fingerprint("a"));
        assertThat(record.createdAt().toEpochMilli())
                .as("the server's clock, as the store estimates it")
                .isBetween(before - CLOCK_TOLERANCE_MILLIS, after + CLOCK_TOLERANCE_MILLIS);
        assertThat(record.leaseExpiresAt()).isEqualTo(record.createdAt().plus(LEASE));
        assertThat(record.expiresAt()).isEqualTo(record.createdAt().plus(RETENTION));
        assertThat(record.response()).isNull();

        String redisKey = redisKey(key);
        assertThat(redisKey).isEqualTo(config.keyPrefix() + "{" + key.hash() + "}:r");
        String owner = claimed.owner().value();
        assertThat(admin().get(redisKey))
                .as("one packed value: status, times, lease mark, owner, fingerprint")
                .isEqualTo("2P" + fixed(record.leaseExpiresAt().toEpochMilli())
                        + fixed(record.expiresAt().toEpochMilli())
                        + fixed(RETENTION.toMillis() - LEASE.toMillis()) + fixed(RETENTION.toMillis())
                        + owner.length() + ":" + owner + "test-sha256:a".length() + ":" + "test-sha256:a"
                        + record.createdAt().toEpochMilli() + ":");
        assertThat(admin().pttl(redisKey)).isBetween(RETENTION.toMillis() - 5_000, RETENTION.toMillis());
        assertThat(store().find(key)).contains(record);
    }

    @Test
    void aLiveLeaseIsInFlightWhateverTheFingerprintAndIsLeftUntouched() {
        ScopeKey key = randomKey();
        IdempotencyRecord first = claim(key, fingerprint("a")).record();

        ClaimOutcome same = store().claim(key, fingerprint("a"), LEASE, RETENTION);
        ClaimOutcome other = otherStore().claim(key, fingerprint("b"), LEASE, RETENTION);

        assertThat(same).isEqualTo(new ClaimOutcome.InFlight(first));
        assertThat(other).isEqualTo(new ClaimOutcome.InFlight(first));
        assertThat(store().find(key)).contains(first);
    }

    @Test
    void anExpiredLeaseIsTakenOverOnlyWithTheSameFingerprint() {
        ScopeKey key = randomKey();
        IdempotencyRecord first = ((ClaimOutcome.Claimed)
                        store().claim(key, fingerprint("a"), Duration.ofMillis(200), RETENTION))
                .record();
        OwnerToken stale = first.owner();
        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> serverMillis() > first.leaseExpiresAt().toEpochMilli());

        assertThat(otherStore().claim(key, fingerprint("b"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.InFlight(first));
        assertThat(store().find(key)).contains(first);

        admin().pexpire(redisKey(key), 5_000);
        ClaimOutcome taken = otherStore().claim(key, fingerprint("a"), LEASE, RETENTION);
        assertThat(taken).isInstanceOf(ClaimOutcome.Claimed.class);
        ClaimOutcome.Claimed takeover = (ClaimOutcome.Claimed) taken;
        assertThat(takeover.takeover()).isTrue();
        assertThat(takeover.owner()).isNotEqualTo(stale);
        assertThat(takeover.record().createdAt()).isEqualTo(first.createdAt());
        assertThat(takeover.record().leaseExpiresAt()).isAfter(first.leaseExpiresAt());
        assertThat(admin().pttl(redisKey(key)))
                .as("the takeover resets the TTL to the retention")
                .isGreaterThan(RETENTION.toMillis() - 5_000);

        assertThat(store().complete(key, stale, RecordStatus.COMPLETED, StoredResponse.of(200, new byte[] {1})))
                .isFalse();
        assertThat(store().renew(key, stale, LEASE)).isFalse();
        assertThat(store().release(key, stale)).isFalse();
        assertThat(store().find(key)).contains(takeover.record());

        assertThat(otherStore()
                        .complete(
                                key, takeover.owner(), RecordStatus.COMPLETED, StoredResponse.of(200, new byte[] {2})))
                .isTrue();
        assertThat(store().find(key).orElseThrow().response().body()).containsExactly(2);
    }

    @Test
    void completeKeepsTheExactResponseForTheRetentionFromCompletion() {
        ScopeKey key = randomKey();
        OwnerToken owner = claim(key, fingerprint("a")).owner();
        admin().pexpire(redisKey(key), 5_000);
        StoredResponse response = binaryResponse();

        long before = serverMillis();
        assertThat(store().complete(key, owner, RecordStatus.COMPLETED, response))
                .isTrue();
        long after = serverMillis();

        assertThat(admin().pttl(redisKey(key)))
                .as("TTL reset to the retention at completion")
                .isBetween(RETENTION.toMillis() - 5_000, RETENTION.toMillis());
        IdempotencyRecord record = otherStore().find(key).orElseThrow();
        assertThat(admin().get(redisKey(key)))
                .as("completed at the record's expiry less the retention, lease dropped")
                .startsWith("2C" + fixed(record.expiresAt().toEpochMilli() - RETENTION.toMillis()) + fixed(0) + fixed(0)
                        + fixed(RETENTION.toMillis()) + owner.value().length() + ":" + owner.value());
        assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(record.owner()).isEqualTo(owner);
        assertThat(record.leaseExpiresAt()).isNull();
        assertThat(record.expiresAt().toEpochMilli())
                .isBetween(
                        before + RETENTION.toMillis() - CLOCK_TOLERANCE_MILLIS,
                        after + RETENTION.toMillis() + CLOCK_TOLERANCE_MILLIS);
        assertThat(record.response()).isEqualTo(response);
        assertThat(record.response().body()).containsExactly(binaryBody());
        assertThat(record.response().headers()).containsExactlyEntriesOf(response.headers());

        ClaimOutcome again = otherStore().claim(key, fingerprint("a"), LEASE, RETENTION);
        assertThat(again).isEqualTo(new ClaimOutcome.Finished(record));
        ClaimOutcome reused = otherStore().claim(key, fingerprint("b"), LEASE, RETENTION);
        assertThat(reused)
                .as("a different fingerprint gets the record untouched")
                .isEqualTo(new ClaimOutcome.Finished(record));
    }

    /**
     * The claiming store completes with the value its claim wrote (finish.lua); any other store with the
     * owner token, with the value on the server (complete.lua): the same record either way, after a
     * renewal and after a takeover too.
     */
    @Test
    void aCompletionWritesTheSameRecordWhetherOrNotTheCompletingStoreMadeTheClaim() {
        StoredResponse response = new StoredResponse(
                201,
                Map.of("content-type", List.of("application/json"), "x-multi", List.of("one", "two")),
                "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));
        for (boolean sameStore : new boolean[] {true, false}) {
            for (boolean takenOver : new boolean[] {false, true}) {
                ScopeKey key = randomKey();
                OwnerToken owner;
                if (takenOver) {
                    store().claim(key, fingerprint("a"), Duration.ofMillis(1), RETENTION);
                    await().atMost(Duration.ofSeconds(5))
                            .until(() -> admin().pttl(redisKey(key)) < RETENTION.toMillis() - 1);
                    ClaimOutcome.Claimed taken = claim(key, fingerprint("a"));
                    assertThat(taken.takeover()).isTrue();
                    owner = taken.owner();
                } else {
                    owner = claim(key, fingerprint("a")).owner();
                }
                assertThat(store().renew(key, owner, Duration.ofSeconds(40))).isTrue();
                admin().pexpire(redisKey(key), 5_000);
                String processing = admin().get(redisKey(key));

                RedisIdempotencyStore completing = sameStore ? store() : otherStore();
                int held = store().heldClaims();
                assertThat(completing.complete(key, owner, RecordStatus.FAILED, response))
                        .isTrue();
                assertThat(store().heldClaims())
                        .as("the claimant's value used and forgotten, or left alone")
                        .isEqualTo(sameStore ? held - 1 : held);

                String finished = admin().get(redisKey(key));
                String part = new String(RecordValue.finishedPart(response), StandardCharsets.UTF_8);
                assertThat(finished)
                        .as("same store %s, taken over %s", sameStore, takenOver)
                        .isEqualTo("2F" + finished.substring(2, 15) + fixed(0) + fixed(0) + processing.substring(41)
                                + part);
                assertThat(admin().pttl(redisKey(key)))
                        .as("the retention from the completion")
                        .isBetween(RETENTION.toMillis() - 5_000, RETENTION.toMillis());
                assertThat(otherStore().find(key).orElseThrow().response()).isEqualTo(response);
            }
        }
    }

    @Test
    void aReleaseForgetsTheHeldClaimAndAForeignCompletionCannotUseIt() {
        ScopeKey key = randomKey();
        int held = store().heldClaims();
        OwnerToken owner = claim(key, fingerprint("a")).owner();
        assertThat(store().heldClaims()).isEqualTo(held + 1);
        assertThat(store().release(key, owner)).isTrue();
        assertThat(store().heldClaims()).isEqualTo(held);
        assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                .as("released: nothing to complete")
                .isFalse();

        ScopeKey other = randomKey();
        OwnerToken mine = claim(other, fingerprint("a")).owner();
        assertThat(store().complete(randomKey(), mine, RecordStatus.COMPLETED, binaryResponse()))
                .as("the owner of another key completes nothing")
                .isFalse();
        assertThat(store().find(other).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(store().complete(other, mine, RecordStatus.COMPLETED, binaryResponse()))
                .as("completed the other way, the held value forgotten")
                .isTrue();
        assertThat(store().find(other).orElseThrow().response()).isEqualTo(binaryResponse());
    }

    @Test
    void aFailedOutcomeWithAnEmptyBodyIsKeptAndReplayed() {
        ScopeKey key = randomKey();
        OwnerToken owner = claim(key, fingerprint("a")).owner();
        StoredResponse decline = new StoredResponse(402, Map.of(), new byte[0]);

        assertThat(store().complete(key, owner, RecordStatus.FAILED, decline)).isTrue();

        ClaimOutcome replay = otherStore().claim(key, fingerprint("a"), LEASE, RETENTION);
        assertThat(replay).isInstanceOf(ClaimOutcome.Finished.class);
        assertThat(replay.record().status()).isEqualTo(RecordStatus.FAILED);
        assertThat(replay.record().response()).isEqualTo(decline);
        assertThat(admin().pttl(redisKey(key))).isPositive();
    }

    @Test
    void aStaleOrForeignOwnerCannotOverwriteAnything() {
        ScopeKey key = randomKey();
        IdempotencyRecord claimed = claim(key, fingerprint("a")).record();
        OwnerToken stranger = OwnerToken.random();

        assertThat(otherStore().complete(key, stranger, RecordStatus.COMPLETED, StoredResponse.of(200, new byte[] {9})))
                .isFalse();
        assertThat(otherStore().release(key, stranger)).isFalse();
        assertThat(otherStore().renew(key, stranger, Duration.ofMinutes(10))).isFalse();
        assertThat(store().find(key)).contains(claimed);

        StoredResponse first = StoredResponse.of(200, new byte[] {1});
        assertThat(store().complete(key, claimed.owner(), RecordStatus.COMPLETED, first))
                .isTrue();
        IdempotencyRecord finished = store().find(key).orElseThrow();

        assertThat(store().complete(key, claimed.owner(), RecordStatus.FAILED, StoredResponse.of(500, new byte[] {2})))
                .as("a finished record is final, even for its owner")
                .isFalse();
        assertThat(store().release(key, claimed.owner())).isFalse();
        assertThat(store().renew(key, claimed.owner(), LEASE)).isFalse();
        assertThat(store().find(key)).contains(finished);

        ScopeKey absent = randomKey();
        assertThat(store().complete(absent, stranger, RecordStatus.COMPLETED, first))
                .isFalse();
        assertThat(store().release(absent, stranger)).isFalse();
        assertThat(store().renew(absent, stranger, LEASE)).isFalse();
        assertThat(admin().exists(redisKey(absent)))
                .as("fenced writes never create a key")
                .isZero();
    }

    @Test
    void releaseDeletesTheRecordSoThatARetryClaimsAfresh() {
        ScopeKey key = randomKey();
        OwnerToken owner = claim(key, fingerprint("a")).owner();

        assertThat(store().release(key, owner)).isTrue();

        assertThat(admin().exists(redisKey(key))).isZero();
        assertThat(store().find(key)).isEmpty();
        ClaimOutcome.Claimed retry = (ClaimOutcome.Claimed) otherStore().claim(key, fingerprint("b"), LEASE, RETENTION);
        assertThat(retry.takeover()).isFalse();
        assertThat(retry.owner()).isNotEqualTo(owner);
        assertThat(retry.record().fingerprint()).isEqualTo(fingerprint("b"));
    }

    @Test
    void renewMovesTheLeaseAndNeverLetsTheRecordExpireUnderALiveLease() {
        ScopeKey key = randomKey();
        ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed)
                store().claim(key, fingerprint("a"), Duration.ofSeconds(1), Duration.ofSeconds(3));

        long before = serverMillis();
        assertThat(store().renew(key, claimed.owner(), Duration.ofSeconds(20))).isTrue();
        assertThat(admin().get(redisKey(key)))
                .as("the lease outlasts the TTL: the TTL becomes the lease, mark 0")
                .startsWith("2P")
                .contains(fixed(0) + fixed(3_000));
        IdempotencyRecord renewed = store().find(key).orElseThrow();
        assertThat(renewed.leaseExpiresAt().toEpochMilli()).isGreaterThanOrEqualTo(before + 20_000);
        assertThat(renewed.expiresAt()).isEqualTo(renewed.leaseExpiresAt());
        assertThat(admin().pttl(redisKey(key))).isGreaterThan(15_000);

        assertThat(store().renew(key, claimed.owner(), Duration.ofSeconds(1))).isTrue();
        IdempotencyRecord shortened = store().find(key).orElseThrow();
        assertThat(shortened.leaseExpiresAt()).isBefore(renewed.leaseExpiresAt());
        assertThat(shortened.expiresAt())
                .as("a shorter lease never shortens the record's life")
                .isEqualTo(renewed.expiresAt());
        assertThat(admin().pttl(redisKey(key))).isGreaterThan(15_000);
        assertThat(shortened.owner()).isEqualTo(claimed.owner());
        assertThat(shortened.createdAt()).isEqualTo(claimed.record().createdAt());
    }

    @Test
    void aRecordNeverExpiresUnderALiveLeaseEvenIfTheRetentionIsShorter() {
        ScopeKey key = randomKey();
        ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed)
                store().claim(key, fingerprint("a"), Duration.ofSeconds(20), Duration.ofSeconds(1));
        assertThat(claimed.record().expiresAt()).isEqualTo(claimed.record().leaseExpiresAt());
        assertThat(admin().pttl(redisKey(key))).isGreaterThan(15_000);
    }

    @Test
    void scriptsAreResentAfterScriptFlush() {
        ScopeKey warm = randomKey();
        claim(warm, fingerprint("a"));
        onEveryNode(RedisCommands::scriptFlush);
        ScopeKey key = randomKey();
        String[] shas = Arrays.stream(LuaScript.values()).map(LuaScript::sha1).toArray(String[]::new);
        assertThat(scriptsCachedFor(redisKey(key), shas)).containsOnly(false);

        ClaimOutcome.Claimed first =
                (ClaimOutcome.Claimed) store().claim(key, fingerprint("a"), Duration.ofMillis(1), RETENTION);
        await().atMost(Duration.ofSeconds(5)).until(() -> admin().pttl(redisKey(key)) < RETENTION.toMillis() - 1);
        OwnerToken owner = claim(key, fingerprint("a")).owner();
        assertThat(owner).as("taken over: the claim script ran").isNotEqualTo(first.owner());
        try (ChangeSubscription waiting = store().subscribe(key)) {
            assertThat(store().claim(key, fingerprint("a"), LEASE, RETENTION))
                    .as("in flight and waited for: touched")
                    .isInstanceOf(ClaimOutcome.InFlight.class);
        }
        // a lease of another length: the record's lease fields change, so that the completion is finish.lua's
        // (SET ... IFEQ, or finish-if-equal.lua where the server has no IFEQ, finds another value than the one held)
        assertThat(store().renew(key, owner, LEASE.plusSeconds(7))).isTrue();
        assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();
        assertThat(store().claim(key, fingerprint("a"), LEASE, RETENTION)).isInstanceOf(ClaimOutcome.Finished.class);
        assertThat(store().release(key, owner)).isFalse();
        // a completion by a store that did not make the claim (complete.lua)
        ScopeKey foreign = randomKey();
        OwnerToken foreignOwner = claim(foreign, fingerprint("a")).owner();
        assertThat(otherStore().complete(foreign, foreignOwner, RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();

        assertThat(scriptsCachedFor(
                        redisKey(key),
                        Arrays.stream(LuaScript.values())
                                .filter(script -> script != LuaScript.COMPLETE)
                                .filter(script -> script != LuaScript.FINISH_IF_EQUAL || !store().compareAndSet())
                                .map(LuaScript::sha1)
                                .toArray(String[]::new)))
                .as("EVAL cached every script again")
                .containsOnly(true);
        assertThat(scriptsCachedFor(redisKey(foreign), LuaScript.COMPLETE.sha1()))
                .containsOnly(true);
    }

    @Test
    void completeAndReleaseWakeWaitersOfAnotherStoreInstance() throws InterruptedException {
        ScopeKey completed = randomKey();
        ScopeKey released = randomKey();
        ScopeKey untouched = randomKey();
        OwnerToken first = claim(completed, fingerprint("a")).owner();
        OwnerToken second = claim(released, fingerprint("a")).owner();
        claim(untouched, fingerprint("a"));
        try (ChangeSubscription onCompleted = waitFor(otherStore(), completed);
                ChangeSubscription onReleased = waitFor(otherStore(), released);
                ChangeSubscription onUntouched = waitFor(otherStore(), untouched)) {
            assertThat(store().complete(completed, first, RecordStatus.COMPLETED, binaryResponse()))
                    .isTrue();
            assertThat(store().release(released, second)).isTrue();

            assertThat(onCompleted.await(Duration.ofSeconds(5))).isTrue();
            assertThat(onReleased.await(Duration.ofSeconds(5))).isTrue();
            assertThat(onUntouched.await(Duration.ofMillis(300)))
                    .as("no signal for a key that did not change")
                    .isFalse();
        }
    }

    @Test
    void changesFromEverySlotReachOneSubscriber() throws InterruptedException {
        List<ScopeKey> keys = new ArrayList<>();
        List<OwnerToken> owners = new ArrayList<>();
        List<ChangeSubscription> subscriptions = new ArrayList<>();
        try {
            for (int i = 0; i < 24; i++) {
                ScopeKey key = randomKey();
                keys.add(key);
                owners.add(claim(key, fingerprint("a")).owner());
                subscriptions.add(waitFor(otherStore(), key));
            }
            for (int i = 0; i < keys.size(); i++) {
                assertThat(store().complete(
                                        keys.get(i),
                                        owners.get(i),
                                        RecordStatus.COMPLETED,
                                        StoredResponse.of(200, new byte[0])))
                        .isTrue();
            }
            for (ChangeSubscription subscription : subscriptions) {
                assertThat(subscription.await(Duration.ofSeconds(5))).isTrue();
            }
        } finally {
            subscriptions.forEach(ChangeSubscription::close);
        }
    }

    /**
     * A waiter in another instance that subscribes and claims again while the owner completes, the two
     * started together, over and over: whichever comes first, the waiter either finds the record finished or is
     * woken by a signal, never left to its wait's end (on a server with compare-and-set the completion is a
     * {@code SET ... IFEQ} that publishes nothing unless the waiter's claim touched the record first).
     */
    @Test
    void aWaiterRacingTheCompletionIsNeverLeftWaiting() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(1);
        int woken = 0;
        int found = 0;
        try {
            for (int i = 0; i < 150; i++) {
                ScopeKey key = randomKey();
                OwnerToken owner = claim(key, fingerprint("a")).owner();
                CyclicBarrier start = new CyclicBarrier(2);
                Future<Boolean> waiter = threads.submit(() -> {
                    start.await(5, TimeUnit.SECONDS);
                    try (ChangeSubscription subscription = otherStore().subscribe(key)) {
                        ClaimOutcome outcome = otherStore().claim(key, fingerprint("a"), LEASE, RETENTION);
                        if (outcome instanceof ClaimOutcome.Finished) {
                            return false;
                        }
                        assertThat(outcome).isInstanceOf(ClaimOutcome.InFlight.class);
                        assertThat(subscription.await(Duration.ofSeconds(10)))
                                .as("woken by the completion of the record its claim found in flight")
                                .isTrue();
                        assertThat(otherStore().claim(key, fingerprint("a"), LEASE, RETENTION))
                                .isInstanceOf(ClaimOutcome.Finished.class);
                        return true;
                    }
                });
                start.await(5, TimeUnit.SECONDS);
                assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                        .isTrue();
                if (waiter.get(15, TimeUnit.SECONDS)) {
                    woken++;
                } else {
                    found++;
                }
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(woken + found).isEqualTo(150);
    }

    /**
     * What a waiter does (the engine's wait): subscribes, then claims again, and finds the record in flight;
     * the subscription is then signalled when that record changes.
     */
    protected static ChangeSubscription waitFor(IdempotencyStore waiter, ScopeKey key) {
        ChangeSubscription subscription = waiter.subscribe(key);
        try {
            assertThat(waiter.claim(key, fingerprint("a"), LEASE, RETENTION))
                    .as("claimed again after subscribing")
                    .isInstanceOf(ClaimOutcome.InFlight.class);
        } catch (RuntimeException | AssertionError e) {
            subscription.close();
            throw e;
        }
        return subscription;
    }

    @Test
    void aWaiterInAnotherInstanceIsWokenByThePushWithPollingDisabled() throws Exception {
        Scope scope = new Scope(
                "tenant-" + RedisStoreTestSupport.randomHex(4),
                "POST",
                "/v1/charges",
                IdempotencyKey.parse("k-" + RedisStoreTestSupport.randomHex(8)));
        IdempotencyPolicy policy = IdempotencyPolicy.custom()
                .lease(LEASE)
                .retention(RETENTION)
                .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20)))
                .build();
        IdempotencyRequest request = IdempotencyRequest.of(scope, fingerprint("charge"), policy);
        CountDownLatch ownerRunning = new CountDownLatch(1);
        CountDownLatch waiterParked = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicBoolean pushed = new AtomicBoolean();
        AtomicReference<IdempotencyListener.WaitResult> waitResult = new AtomicReference<>();
        IdempotencyEngine owner =
                IdempotencyEngine.builder(store()).pollInterval(null).build();
        IdempotencyEngine waiter = IdempotencyEngine.builder(new ObservedStore(otherStore(), waiterParked, pushed))
                .pollInterval(null)
                .listener(new IdempotencyListener() {
                    @Override
                    public void onWait(IdempotencyRequest r, Duration waited, WaitResult result) {
                        waitResult.set(result);
                    }
                })
                .build();
        StoredResponse response = binaryResponse();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<IdempotentResult> first = threads.submit(() -> owner.execute(request, lease -> {
                ownerRunning.countDown();
                assertThat(finish.await(20, TimeUnit.SECONDS)).isTrue();
                return Outcome.complete(response);
            }));
            assertThat(ownerRunning.await(10, TimeUnit.SECONDS)).isTrue();
            Future<IdempotentResult> second = threads.submit(() -> waiter.execute(request, lease -> {
                throw new AssertionError("the duplicate must not run");
            }));
            assertThat(waiterParked.await(10, TimeUnit.SECONDS)).isTrue();
            long released = System.nanoTime();
            finish.countDown();

            IdempotentResult replay = second.get(10, TimeUnit.SECONDS);
            Duration wokenAfter = Duration.ofNanos(System.nanoTime() - released);
            assertThat(first.get(10, TimeUnit.SECONDS).kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
            assertThat(replay.kind()).isEqualTo(IdempotentResult.Kind.REPLAYED);
            assertThat(replay.response()).isEqualTo(response);
            assertThat(waitResult.get()).isEqualTo(IdempotencyListener.WaitResult.REPLAYED);
            assertThat(pushed)
                    .as("the waiter was woken by a signal, not by its timeout")
                    .isTrue();
            assertThat(wokenAfter).as("far sooner than the 30 s lease end").isLessThan(Duration.ofSeconds(5));
        } finally {
            finish.countDown();
            threads.shutdownNow();
        }
    }

    @Test
    void aResubscriptionAfterAConnectionLossWakesEveryWaiter() throws InterruptedException {
        String clientName = "exactly-test-resub-" + RedisStoreTestSupport.randomHex(4);
        RedisIdempotencyStore listening = register(newStore(config, clientName));
        ScopeKey key = randomKey();
        assertThat(listening.find(key)).isEmpty();
        try (ChangeSubscription subscription = listening.subscribe(key)) {
            subscription.await(Duration.ZERO);
            assertThat(subscription.await(Duration.ofMillis(200)))
                    .as("no stray signal before the loss")
                    .isFalse();
            // every subscribed connection of the store is cut: one as a rule (a cluster run on a heavily
            // loaded machine once listed two, and cutting both tests the same recovery)
            int killed = killPubSubConnections(clientName);
            assertThat(killed).as("pub/sub connections of " + clientName).isPositive();

            assertThat(subscription.await(Duration.ofSeconds(10)))
                    .as("woken to re-read once the subscription is back")
                    .isTrue();
        }
        ScopeKey later = randomKey();
        try (ChangeSubscription subscription = listening.subscribe(later)) {
            OwnerToken owner = claim(later, fingerprint("a")).owner();
            assertThat(store().release(later, owner)).isTrue();
            assertThat(subscription.await(Duration.ofSeconds(5)))
                    .as("messages flow again")
                    .isTrue();
        }
    }

    private int killPubSubConnections(String clientName) {
        int[] killed = new int[1];
        onEveryNode(node -> {
            for (String line : node.clientList().split("\n", 0)) {
                if (line.contains(" name=" + clientName + " ") && !line.contains(" sub=0 ")) {
                    String id = line.substring(line.indexOf("id=") + 3, line.indexOf(' '));
                    killed[0] += (int) node.clientKill(KillArgs.Builder.id(Long.parseLong(id)))
                            .longValue();
                }
            }
        });
        return killed[0];
    }

    /** The last command of each of {@code clientName}'s connections that is not a pub/sub one, on every node. */
    private List<String> lastCommands(String clientName) {
        List<String> commands = new java.util.ArrayList<>();
        onEveryNode(node -> {
            for (String line : node.clientList().split("\n", 0)) {
                if (line.contains(" name=" + clientName + " ") && line.contains(" sub=0 ")) {
                    int at = line.indexOf(" cmd=") + 5;
                    commands.add(line.substring(at, line.indexOf(' ', at)));
                }
            }
        });
        return commands;
    }

    @Test
    void whileMostKeysAreReplaysAClaimReadsFirstAndEveryKindOfKeyGetsTheSameAnswer() {
        String clientName = "exactly-test-read-first-" + RedisStoreTestSupport.randomHex(4);
        RedisIdempotencyStore reading = register(newStore(config, clientName));
        assertThat(reading.claimsFirst()).as("a new store expects fresh keys").isEqualTo("set");
        ScopeKey done = randomKey();
        ClaimOutcome.Claimed first = claim(done, fingerprint("a"));
        assertThat(store().complete(done, first.owner(), RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();
        IdempotencyRecord finished = store().find(done).orElseThrow();

        assertThat(reading.claim(done, fingerprint("a"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.Finished(finished));
        assertThat(lastCommands(clientName))
                .as("a replay claimed first: SET ... NX GET")
                .contains("set")
                .doesNotContain("get");
        for (int i = 0; i < 40 && reading.claimsFirst().equals("set"); i++) {
            assertThat(reading.claim(done, fingerprint("b"), LEASE, RETENTION))
                    .as("a replay whatever the fingerprint; the engine decides on it")
                    .isEqualTo(new ClaimOutcome.Finished(finished));
        }
        assertThat(reading.claimsFirst())
                .as("replays one after another: reads first")
                .isEqualTo("get");
        assertThat(reading.claim(done, fingerprint("a"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.Finished(finished));
        assertThat(lastCommands(clientName))
                .as("the replay was one GET")
                .contains("get")
                .doesNotContain("set");
        assertThat(admin().pttl(redisKey(done)))
                .as("a read writes nothing, nor the TTL")
                .isLessThanOrEqualTo(RETENTION.toMillis());

        // while it reads first, a key without a finished record is claimed as before, after the read
        reading.claimFirst("get", true);
        ScopeKey fresh = randomKey();
        ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed) reading.claim(fresh, fingerprint("a"), LEASE, RETENTION);
        assertThat(claimed.takeover()).isFalse();
        assertThat(store().find(fresh)).contains(claimed.record());
        assertThat(reading.claim(fresh, fingerprint("a"), LEASE, RETENTION))
                .as("in flight")
                .isEqualTo(new ClaimOutcome.InFlight(claimed.record()));
        assertThat(reading.complete(fresh, claimed.owner(), RecordStatus.FAILED, StoredResponse.of(409, new byte[0])))
                .as("the claim is held as any other: its completion is fenced by its owner")
                .isTrue();
        assertThat(reading.claim(fresh, fingerprint("a"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.Finished(store().find(fresh).orElseThrow()));

        ScopeKey abandoned = randomKey();
        IdempotencyRecord dead = ((ClaimOutcome.Claimed)
                        store().claim(abandoned, fingerprint("a"), Duration.ofMillis(50), RETENTION))
                .record();
        await().atMost(Duration.ofSeconds(5))
                .until(() -> admin().pttl(redisKey(abandoned)) <= RETENTION.toMillis() - 50);
        assertThat(reading.claim(abandoned, fingerprint("b"), LEASE, RETENTION))
                .as("another fingerprint never takes over")
                .isEqualTo(new ClaimOutcome.InFlight(dead));
        ClaimOutcome.Claimed taken =
                (ClaimOutcome.Claimed) reading.claim(abandoned, fingerprint("a"), LEASE, RETENTION);
        assertThat(taken.takeover())
                .as("an abandoned claim is taken over after the read")
                .isTrue();
        assertThat(store().release(abandoned, dead.owner())).isFalse();
        assertThat(reading.release(abandoned, taken.owner())).isTrue();

        // keys without a finished record move it back
        reading.claimFirst("get", false);
        for (int i = 0; i < 40 && reading.claimsFirst().equals("get"); i++) {
            reading.claim(randomKey(), fingerprint("a"), LEASE, RETENTION);
        }
        assertThat(reading.claimsFirst())
                .as("fresh keys one after another: claims first again")
                .isEqualTo("set");
    }

    @Test
    void concurrentClaimsFromTwoInstancesHaveExactlyOneWinner() throws Exception {
        ScopeKey key = randomKey();
        int threads = 16;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<ClaimOutcome>> outcomes = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                IdempotencyStore target = i % 2 == 0 ? store() : otherStore();
                outcomes.add(CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                start.await(10, TimeUnit.SECONDS);
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                            return target.claim(key, fingerprint("a"), LEASE, RETENTION);
                        },
                        pool));
            }
            List<ClaimOutcome> results = new ArrayList<>();
            for (CompletableFuture<ClaimOutcome> outcome : outcomes) {
                results.add(outcome.get(20, TimeUnit.SECONDS));
            }
            List<ClaimOutcome> winners = results.stream()
                    .filter(ClaimOutcome.Claimed.class::isInstance)
                    .toList();
            assertThat(winners).hasSize(1);
            OwnerToken owner = ((ClaimOutcome.Claimed) winners.getFirst()).owner();
            assertThat(results)
                    .filteredOn(ClaimOutcome.InFlight.class::isInstance)
                    .hasSize(threads - 1)
                    .allSatisfy(outcome -> assertThat(outcome.record().owner()).isEqualTo(owner));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void invalidArgumentsAreRejectedBeforeAnyCommand() {
        ScopeKey key = randomKey();
        assertThatThrownBy(() -> store().claim(key, fingerprint("a"), Duration.ZERO, RETENTION))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store().claim(key, fingerprint("a"), LEASE, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store().complete(
                                key, OwnerToken.random(), RecordStatus.PROCESSING, StoredResponse.of(200, new byte[0])))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(store().find(key)).isEqualTo(Optional.empty());
    }

    @Test
    void aSubMillisecondLeaseRoundsUpRatherThanToZero() {
        ScopeKey key = randomKey();
        ClaimOutcome.Claimed claimed =
                (ClaimOutcome.Claimed) store().claim(key, fingerprint("a"), Duration.ofNanos(1), RETENTION);
        Instant created = claimed.record().createdAt();
        assertThat(claimed.record().leaseExpiresAt()).isEqualTo(created.plusMillis(1));
    }

    @Test
    void aTakeoverRaceBetweenThreadsOfTwoInstancesHasExactlyOneWinner() throws Exception {
        ScopeKey key = randomKey();
        ClaimOutcome.Claimed abandoned =
                (ClaimOutcome.Claimed) store().claim(key, fingerprint("a"), Duration.ofMillis(100), RETENTION);
        long mark = RETENTION.toMillis() - 100;
        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> admin().pttl(redisKey(key)) <= mark);

        List<ClaimOutcome> results =
                race(16, i -> (i % 2 == 0 ? store() : otherStore()).claim(key, fingerprint("a"), LEASE, RETENTION));

        List<ClaimOutcome> winners =
                results.stream().filter(ClaimOutcome.Claimed.class::isInstance).toList();
        assertThat(winners).hasSize(1);
        ClaimOutcome.Claimed winner = (ClaimOutcome.Claimed) winners.getFirst();
        assertThat(winner.takeover()).isTrue();
        assertThat(winner.owner()).isNotEqualTo(abandoned.owner());
        assertThat(results)
                .filteredOn(ClaimOutcome.InFlight.class::isInstance)
                .hasSize(15)
                .allSatisfy(outcome -> assertThat(outcome.record().owner()).isEqualTo(winner.owner()));
        assertThat(store().complete(
                                key, abandoned.owner(), RecordStatus.COMPLETED, StoredResponse.of(200, new byte[] {1})))
                .as("the abandoned owner is fenced off")
                .isFalse();
        assertThat(otherStore()
                        .complete(key, winner.owner(), RecordStatus.COMPLETED, StoredResponse.of(200, new byte[] {2})))
                .isTrue();
        assertThat(store().find(key).orElseThrow().response().body()).containsExactly(2);
    }

    @Test
    void aWrongEstimateOfTheServerClockNeverGivesALiveLeaseToASecondOwner() throws Exception {
        long hour = Duration.ofHours(1).toMillis();
        RedisIdempotencyStore behind = register(newStore(config, "exactly-test-behind"));
        RedisIdempotencyStore ahead = register(newStore(config, "exactly-test-ahead"));
        behind.skewClock(-hour);
        ahead.skewClock(hour);

        ScopeKey key = randomKey();
        Duration lease = Duration.ofSeconds(3);
        ClaimOutcome.Claimed first = (ClaimOutcome.Claimed) behind.claim(key, fingerprint("a"), lease, RETENTION);
        long now = serverMillis();
        assertThat(first.record().leaseExpiresAt().toEpochMilli())
                .as("written an hour early")
                .isLessThan(now - hour + lease.toMillis() + CLOCK_TOLERANCE_MILLIS);

        List<ClaimOutcome> live = race(8, i -> switch (i % 4) {
            case 0 -> ahead.claim(key, fingerprint("a"), LEASE, RETENTION);
            case 1 -> behind.claim(key, fingerprint("a"), LEASE, RETENTION);
            case 2 -> store().claim(key, fingerprint("a"), LEASE, RETENTION);
            default -> otherStore().claim(key, fingerprint("a"), LEASE, RETENTION);
        });
        assertThat(live)
                .as("the lease is decided on the server's count of the key's TTL, whatever the estimates")
                .allSatisfy(outcome -> assertThat(outcome).isEqualTo(new ClaimOutcome.InFlight(first.record())));

        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> admin().pttl(redisKey(key)) <= RETENTION.toMillis() - lease.toMillis());
        List<ClaimOutcome> over =
                race(8, i -> (i % 2 == 0 ? ahead : store()).claim(key, fingerprint("a"), LEASE, RETENTION));
        List<ClaimOutcome> winners =
                over.stream().filter(ClaimOutcome.Claimed.class::isInstance).toList();
        assertThat(winners).hasSize(1);
        OwnerToken second = ((ClaimOutcome.Claimed) winners.getFirst()).owner();
        assertThat(behind.complete(key, first.owner(), RecordStatus.COMPLETED, StoredResponse.of(200, new byte[] {1})))
                .as("the first owner, its lease over, is fenced off")
                .isFalse();
        assertThat(store().complete(key, second, RecordStatus.COMPLETED, StoredResponse.of(200, new byte[] {2})))
                .isTrue();
        assertThat(behind.claim(key, fingerprint("a"), LEASE, RETENTION)).isInstanceOf(ClaimOutcome.Finished.class);
    }

    @Test
    void claimsThroughTheScriptAsOnRedisBefore7AndPlainClaimsShareOneProtocol() {
        RedisIdempotencyStore scripted = register(newStore(config, "exactly-test-scripted"));
        scripted.useScriptClaims();
        assertThat(store().plainClaims())
                .as("Redis 7 here: claims are SET NX GET")
                .isTrue();

        ScopeKey key = randomKey();
        ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed) scripted.claim(key, fingerprint("a"), LEASE, RETENTION);
        assertThat(claimed.takeover()).isFalse();
        assertThat(store().find(key)).contains(claimed.record());
        assertThat(store().claim(key, fingerprint("a"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.InFlight(claimed.record()));
        assertThat(scripted.claim(key, fingerprint("b"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.InFlight(claimed.record()));
        assertThat(store().complete(key, claimed.owner(), RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();
        IdempotencyRecord finished = store().find(key).orElseThrow();
        assertThat(scripted.claim(key, fingerprint("a"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.Finished(finished));

        ScopeKey plain = randomKey();
        ClaimOutcome.Claimed short1 =
                (ClaimOutcome.Claimed) store().claim(plain, fingerprint("a"), Duration.ofMillis(50), RETENTION);
        await().atMost(Duration.ofSeconds(5)).until(() -> admin().pttl(redisKey(plain)) <= RETENTION.toMillis() - 50);
        ClaimOutcome.Claimed taken = (ClaimOutcome.Claimed) scripted.claim(plain, fingerprint("a"), LEASE, RETENTION);
        assertThat(taken.takeover()).isTrue();
        assertThat(store().release(plain, short1.owner())).isFalse();
        assertThat(scripted.release(plain, taken.owner())).isTrue();
    }

    @Test
    void recordsOfTheEarlierLayoutStillReplayAndAnAbandonedOneIsTakenOver() {
        ScopeKey finishedKey = randomKey();
        long now = serverMillis();
        String owner = OwnerToken.random().value();
        String fp = "test-sha256:a";
        byte[] headers = HeaderCodec.encode(Map.of("content-type", List.of("text/plain")));
        String legacyFinished = "1C:" + (now - 1_000) + ":0:" + (now + 59_000) + ":60000:" + owner.length() + ":"
                + fp.length() + ":" + owner + fp + "201:" + headers.length + ":"
                + new String(headers, StandardCharsets.ISO_8859_1) + "hello";
        assertThat(legacyFinished)
                .as("ASCII only: the header block's counts are small")
                .matches("\\p{ASCII}*");
        admin().set(redisKey(finishedKey), legacyFinished);
        admin().pexpire(redisKey(finishedKey), 60_000);

        ClaimOutcome replay = store().claim(finishedKey, fingerprint("a"), LEASE, RETENTION);
        assertThat(replay).isInstanceOf(ClaimOutcome.Finished.class);
        IdempotencyRecord record = replay.record();
        assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(record.owner()).isEqualTo(new OwnerToken(owner));
        assertThat(record.createdAt()).isEqualTo(Instant.ofEpochMilli(now - 1_000));
        assertThat(record.expiresAt()).isEqualTo(Instant.ofEpochMilli(now + 59_000));
        assertThat(record.response())
                .isEqualTo(new StoredResponse(
                        201, Map.of("content-type", List.of("text/plain")), "hello".getBytes(StandardCharsets.UTF_8)));

        ScopeKey live = randomKey();
        ScopeKey abandoned = randomKey();
        admin().set(
                        redisKey(live),
                        "1P:" + now + ":" + (now + 30_000) + ":" + (now + 60_000) + ":60000:" + owner.length() + ":"
                                + fp.length() + ":" + owner + fp);
        admin().set(
                        redisKey(abandoned),
                        "1P:" + (now - 5_000) + ":" + (now - 1_000) + ":" + (now + 60_000) + ":60000:" + owner.length()
                                + ":" + fp.length() + ":" + owner + fp);
        admin().pexpire(redisKey(live), 60_000);
        admin().pexpire(redisKey(abandoned), 60_000);

        ClaimOutcome waiting = store().claim(live, fingerprint("a"), LEASE, RETENTION);
        assertThat(waiting).isInstanceOf(ClaimOutcome.InFlight.class);
        assertThat(waiting.record().leaseExpiresAt()).isEqualTo(Instant.ofEpochMilli(now + 30_000));
        assertThat(store().claim(abandoned, fingerprint("b"), LEASE, RETENTION))
                .as("another fingerprint never takes over")
                .isInstanceOf(ClaimOutcome.InFlight.class);
        ClaimOutcome.Claimed taken =
                (ClaimOutcome.Claimed) store().claim(abandoned, fingerprint("a"), LEASE, RETENTION);
        assertThat(taken.takeover()).isTrue();
        assertThat(taken.record().createdAt()).isEqualTo(Instant.ofEpochMilli(now - 5_000));
        assertThat(admin().get(redisKey(abandoned)))
                .as("rewritten in the current layout")
                .startsWith("2P");
        assertThat(store().complete(abandoned, taken.owner(), RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();
        assertThat(otherStore().claim(abandoned, fingerprint("a"), LEASE, RETENTION))
                .isEqualTo(new ClaimOutcome.Finished(store().find(abandoned).orElseThrow()));
    }

    /** Runs {@code threads} calls at once (a barrier releases them together) and returns their outcomes. */
    private static List<ClaimOutcome> race(int threads, IntFunction<ClaimOutcome> call) throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<ClaimOutcome>> outcomes = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int n = i;
                outcomes.add(CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                start.await(10, TimeUnit.SECONDS);
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                            return call.apply(n);
                        },
                        pool));
            }
            List<ClaimOutcome> results = new ArrayList<>();
            for (CompletableFuture<ClaimOutcome> outcome : outcomes) {
                results.add(outcome.get(20, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Delegates to a store, and around the waiter's {@code await}: counts down {@code parked} on entry
     * and records whether a signal (rather than the timeout) ended it.
     */
    private static final class ObservedStore extends ForwardingIdempotencyStore {
        private final CountDownLatch parked;
        private final AtomicBoolean pushed;

        ObservedStore(IdempotencyStore delegate, CountDownLatch parked, AtomicBoolean pushed) {
            super(delegate);
            this.parked = parked;
            this.pushed = pushed;
        }

        @Override
        public ChangeSubscription subscribe(ScopeKey key) {
            ChangeSubscription subscription = delegate().subscribe(key);
            return new ChangeSubscription() {
                @Override
                public boolean await(Duration timeout) throws InterruptedException {
                    parked.countDown();
                    boolean signalled = subscription.await(timeout);
                    if (signalled) {
                        pushed.set(true);
                    }
                    return signalled;
                }

                @Override
                public void close() {
                    subscription.close();
                }
            };
        }
    }
}
