package dev.exactly.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.chaos.LeaseOwnerProcess.Backend;
import dev.exactly.chaos.LeaseOwnerProcess.Place;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Owners that are separate processes on Redis and PostgreSQL, whose engine keeps their lease alive (3 s,
 * renewed every second). An owner alive past several leases keeps its key; {@code kill -9} of the owner
 * lets another process take the key over within the lease and one renewal interval; a frozen owner
 * ({@code SIGSTOP}) past its lease is taken over, and once thawed its late completion is refused.
 */
class LeaseTakeoverTest {
    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration INTERVAL = KeepAlive.interval(LEASE);
    private static final Path LOGS = Workspace.runDirectory("lease-takeover");

    @ParameterizedTest(name = "{0}")
    @EnumSource(Backend.class)
    void killNineOfTheOwnerIsTakenOverWithinTheLeaseAndOneRenewalInterval(Backend backend) throws Exception {
        Place place = backend.open();
        try (IdempotencyStore store = place.store();
                LeaseOwnerProcess owner =
                        LeaseOwnerProcess.start(place, LOGS, "kill-" + UUID.randomUUID(), LEASE, true)) {
            // alive past its lease: renewed, so the key stays in flight
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> System.nanoTime() - owner.claimedNanos()
                            > LEASE.plus(INTERVAL).toNanos());
            assertThat(owner.count("renewal RENEWED")).isGreaterThanOrEqualTo(3);
            IdempotencyRequest request = owner.request();
            assertThat(store.claim(
                            request.key(),
                            request.fingerprint(),
                            LEASE,
                            request.policy().retention()))
                    .isInstanceOf(dev.exactly.idempotency.ClaimOutcome.InFlight.class);

            owner.kill();
            long killed = System.nanoTime();
            Duration takeover =
                    owner.awaitTakeover(store, killed, LEASE.plus(INTERVAL).plusSeconds(30));

            System.out.println("[lease] " + backend + ": kill -9 -> takeover in " + takeover.toMillis() + " ms (lease "
                    + LEASE.toMillis() + " ms, renewal interval " + INTERVAL.toMillis() + " ms)");
            assertThat(takeover).as("kill -9 to takeover").isLessThanOrEqualTo(LEASE.plus(INTERVAL));
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Backend.class)
    void aFrozenOwnerPastItsLeaseIsTakenOverAndItsLateCompletionRefused(Backend backend) throws Exception {
        Place place = backend.open();
        try (IdempotencyStore store = place.store();
                LeaseOwnerProcess owner =
                        LeaseOwnerProcess.start(place, LOGS, "stop-" + UUID.randomUUID(), LEASE, true)) {
            owner.awaitRenewals(2, Duration.ofSeconds(30));
            IdempotencyRequest request = owner.request();
            IdempotencyEngine engine = IdempotencyEngine.builder(store).build();
            StoredResponse winner =
                    StoredResponse.of(201, "{\"by\":\"the process that took over\"}".getBytes(StandardCharsets.UTF_8));

            owner.freeze();
            long frozen = System.nanoTime();
            IdempotentResult[] taken = new IdempotentResult[1];
            await().atMost(LEASE.plus(INTERVAL).plusSeconds(30))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        try {
                            taken[0] = engine.execute(request, lease -> {
                                assertThat(lease.takeover()).isTrue();
                                return Outcome.complete(winner);
                            });
                            return true;
                        } catch (RequestInFlightException stillHeld) {
                            return false;
                        }
                    });
            Duration takeover = Duration.ofNanos(System.nanoTime() - frozen);
            assertThat(taken[0].kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);

            owner.thaw();
            owner.finish();
            assertThat(owner.waitForExit(Duration.ofSeconds(30)))
                    .as(owner.output())
                    .isTrue();
            System.out.println("[lease] " + backend + ": SIGSTOP -> takeover in " + takeover.toMillis()
                    + " ms; the owner, " + "thawed: "
                    + owner.output()
                            .lines()
                            .filter(l -> !l.startsWith("renewal RENEWED"))
                            .toList());
            // a generous bound: the takeover here includes the taking process's own execution
            assertThat(takeover)
                    .as("SIGSTOP to takeover")
                    .isLessThanOrEqualTo(LEASE.plus(INTERVAL).plusSeconds(5));
            assertThat(owner.count("lost=true"))
                    .as("the thawed action sees its lease lost: %s", owner.output())
                    .isEqualTo(1);
            assertThat(owner.count("result LEASE_LOST"))
                    .as("its completion is refused: %s", owner.output())
                    .isEqualTo(1);
            IdempotencyRecord record = store.find(request.key()).orElseThrow();
            assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
            assertThat(record.response()).isEqualTo(winner);
        }
    }
}
