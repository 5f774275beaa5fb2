package dev.exactly.idempotency.redis;

import static dev.exactly.idempotency.redis.RedisStoreTestSupport.binaryResponse;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.fingerprint;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.randomKey;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.spi.ChangeSubscription;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every focused store test on a server with compare-and-set (Valkey 8.1 and later), where the completion
 * of a claim the store holds is {@code SET ... IFEQ} and the scripts stay for the rest; and what that
 * path does and does not send.
 */
class ValkeyStoreTest extends RedisStandaloneStoreTest {
    @Override
    protected int port() {
        return TestValkey.port();
    }

    @Test
    void aFreshKeyIsAClaimAndACompletionWithoutAScript() {
        ScopeKey key = randomKey();
        OwnerToken owner = claimed(key);
        assertThat(store().compareAndSet()).as("detected from INFO server").isTrue();
        standaloneAdmin().configResetstat();

        assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();

        Map<String, Long> calls = commandCalls();
        assertThat(calls)
                .as("SET ... IFEQ, nothing else: the command a floor without fencing sends")
                .containsExactly(Map.entry("set", 1L));
        ClaimOutcome replay = otherStore().claim(key, fingerprint("a"), LEASE, RETENTION);
        assertThat(replay).isInstanceOf(ClaimOutcome.Finished.class);
        IdempotencyRecord record = ((ClaimOutcome.Finished) replay).record();
        assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(java.util.Objects.requireNonNull(record.response()).body())
                .isEqualTo(binaryResponse().body());
        assertThat(standaloneAdmin().pttl(config.recordKey(key)))
                .as("kept for the retention from the completion")
                .isBetween(RETENTION.toMillis() - 5_000, RETENTION.toMillis());
    }

    @Test
    void aRenewedClaimIsNoLongerTheValueHeldAndTheScriptCompletesIt() {
        ScopeKey key = randomKey();
        OwnerToken owner = claimed(key);
        assertThat(store().renew(key, owner, Duration.ofSeconds(45))).isTrue();
        standaloneAdmin().configResetstat();

        assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();

        assertThat(commandCalls())
                .as("the SET ... IFEQ that found another value, then finish.lua")
                .containsEntry("set", 2L)
                .containsEntry("evalsha", 1L);
        assertThat(store().find(key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    @Test
    void aWaitersClaimTouchesTheRecordSoThatTheCompletionIsTheScriptAndPublishes() throws InterruptedException {
        ScopeKey key = randomKey();
        OwnerToken owner = claimed(key);
        IdempotencyRecord before = store().find(key).orElseThrow();
        String held = standaloneAdmin().get(config.recordKey(key));

        try (ChangeSubscription waiting = waitFor(otherStore(), key)) {
            String touched = standaloneAdmin().get(config.recordKey(key));
            assertThat(touched)
                    .as("no longer the value the owner holds")
                    .isNotEqualTo(held)
                    .hasSameSizeAs(held);
            assertThat(touched.substring(0, 15) + touched.substring(28))
                    .as("only the expiry shown differs")
                    .isEqualTo(held.substring(0, 15) + held.substring(28));
            IdempotencyRecord after = store().find(key).orElseThrow();
            assertThat(after.expiresAt()).isEqualTo(before.expiresAt().minusMillis(1));
            assertThat(after.owner()).isEqualTo(owner);
            assertThat(after.fingerprint()).isEqualTo(before.fingerprint());
            assertThat(after.leaseExpiresAt()).isEqualTo(before.leaseExpiresAt());
            assertThat(standaloneAdmin().pttl(config.recordKey(key)))
                    .as("the TTL kept")
                    .isBetween(RETENTION.toMillis() - 5_000, RETENTION.toMillis());
            standaloneAdmin().configResetstat();

            assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                    .isTrue();

            assertThat(commandCalls())
                    .as("the SET ... IFEQ that found the touched value, then finish.lua's SET and PUBLISH")
                    .containsEntry("set", 2L)
                    .containsEntry("evalsha", 1L)
                    .containsEntry("publish", 1L);
            assertThat(waiting.await(Duration.ofSeconds(5)))
                    .as("the waiter in the other instance woke")
                    .isTrue();
        }
        assertThat(store().find(key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    @Test
    void everyWaitersClaimTouchesAgainAndNoneGivesBackTheHeldValue() {
        ScopeKey key = randomKey();
        OwnerToken owner = claimed(key);
        String held = standaloneAdmin().get(config.recordKey(key));
        Instant expiry = store().find(key).orElseThrow().expiresAt();
        try (ChangeSubscription first = waitFor(otherStore(), key);
                ChangeSubscription second = waitFor(store(), key)) {
            assertThat(otherStore().claim(key, fingerprint("a"), LEASE, RETENTION))
                    .isInstanceOf(ClaimOutcome.InFlight.class);
            assertThat(store().find(key).orElseThrow().expiresAt())
                    .as("three touches")
                    .isEqualTo(expiry.minusMillis(3));
            assertThat(standaloneAdmin().get(config.recordKey(key))).isNotEqualTo(held);
            assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                    .isTrue();
        }
        assertThat(store().find(key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    @Test
    void aClaimWithoutWaitersTouchesNothing() {
        ScopeKey key = randomKey();
        claimed(key);
        String held = standaloneAdmin().get(config.recordKey(key));
        assertThat(otherStore().claim(key, fingerprint("a"), LEASE, RETENTION))
                .isInstanceOf(ClaimOutcome.InFlight.class);
        assertThat(standaloneAdmin().get(config.recordKey(key))).isEqualTo(held);
    }
}
