package dev.exactly.payments.config;

import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.RecoveryPolicy;
import dev.exactly.ledger.Ledger;
import dev.exactly.payments.charge.AuthorizationExpiry;
import dev.exactly.payments.charge.ChargeActionAnswers;
import dev.exactly.payments.charge.ChargeActionRepository;
import dev.exactly.payments.charge.ChargeActions;
import dev.exactly.payments.charge.ChargeAnswers;
import dev.exactly.payments.charge.ChargeEvents;
import dev.exactly.payments.charge.ChargeExecutor;
import dev.exactly.payments.charge.ChargeObserver;
import dev.exactly.payments.charge.ChargeOperations;
import dev.exactly.payments.charge.ChargePipeline;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.Ids;
import dev.exactly.payments.charge.PhaseKind;
import dev.exactly.payments.charge.RecoveryWorker;
import dev.exactly.payments.charge.Storage;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.IdempotentRoutes;
import dev.exactly.payments.keys.KeyStatus;
import dev.exactly.payments.keys.ReplayCounter;
import dev.exactly.payments.ledger.LedgerQueries;
import dev.exactly.payments.ledger.TenantAccounts;
import dev.exactly.payments.refund.RefundAnswers;
import dev.exactly.payments.refund.RefundExecutor;
import dev.exactly.payments.refund.RefundObserver;
import dev.exactly.payments.refund.RefundRepository;
import dev.exactly.payments.refund.RefundService;
import dev.exactly.payments.webhooks.Outbox;
import dev.exactly.psp.PspClient;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The service's parts, wired by hand: plain classes, no framework in the domain. The answers charges and
 * refunds record ({@link ChargeAnswers}, {@link RefundAnswers}) are the web layer's beans.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(PaymentsProperties.class)
public class ServiceConfiguration {
    @Bean
    InstantSource clock() {
        return InstantSource.system();
    }

    @Bean
    Jdbc jdbc(DataSource dataSource) {
        return new Jdbc(dataSource);
    }

    @Bean
    Ledger ledger(DataSource dataSource, InstantSource clock) {
        return Ledger.of(dataSource, clock);
    }

    @Bean
    TenantAccounts tenantAccounts(Ledger ledger, PaymentsProperties properties) {
        return new TenantAccounts(ledger, properties.clearingShards());
    }

    /** Draws the jitter of recovery's backoff (from any thread). */
    private static final RandomGenerator JITTER =
            () -> ThreadLocalRandom.current().nextLong();

    /**
     * The durable records' PostgreSQL store, kept in a wrapper: as an {@code IdempotencyStore} bean it would
     * be taken for the hot tier's store, and both tiers would share one table.
     */
    record PhasesStore(PostgresIdempotencyStore store) implements AutoCloseable {
        /** Stops the store's listener connection. */
        @Override
        public void close() {
            store.close();
        }
    }

    @Bean(destroyMethod = "close")
    PhasesStore phasesStore(DataSource dataSource) {
        return new PhasesStore(PostgresIdempotencyStore.create(dataSource));
    }

    /**
     * The library's atomic phases on the durable store: charges and refunds begin, checkpoint and finish
     * their records in their own transactions through it, and recovery resumes abandoned charges with it.
     * The service builds its own instead of the starter's ({@code exactly.idempotency.phases.*}) because its
     * lease, attempts and backoff are {@code exactly.payments.*} settings, and its recovery worker also
     * purges and can be switched off per instance.
     */
    @Bean
    AtomicPhases atomicPhases(
            PhasesStore store,
            PaymentsProperties properties,
            InstantSource clock,
            @Value("${exactly.payments.pool-size:20}") int poolSize) {
        RecoveryPolicy policy = properties.recovery().policy(poolSize);
        checkRecoveryParallelism(policy.parallelism(), poolSize);
        return AtomicPhases.builder(store.store())
                .clock(clock)
                .random(JITTER)
                .recoveryPolicy(policy)
                .build();
    }

    /**
     * The durable records' policy: lease, retention and keep-alive from {@code exactly.payments.*}. Not a
     * bean either: the starter would take an {@code IdempotencyPolicy} bean for the hot tier's.
     */
    static IdempotencyPolicy durablePolicy(PaymentsProperties properties) {
        return IdempotencyPolicy.custom()
                .lease(properties.lease())
                .retention(properties.retention())
                .keepAlive(properties.keepAlive().policy())
                .build();
    }

    @Bean
    IdempotentRoutes idempotentRoutes(PaymentsProperties properties) {
        return new IdempotentRoutes(durablePolicy(properties));
    }

    @Bean(destroyMethod = "close")
    ReplayCounter replayCounter(Jdbc jdbc) {
        return new ReplayCounter(jdbc);
    }

    /** Counts the hot tier's replays per scope, for the key status endpoint (the durable tier's are counted too). */
    @Bean
    IdempotencyListener hotTierReplays(ReplayCounter replays) {
        return new IdempotencyListener() {
            @Override
            public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
                replays.count(request.key());
            }
        };
    }

    @Bean
    ChargeRepository chargeRepository() {
        return new ChargeRepository();
    }

    @Bean
    RefundRepository refundRepository() {
        return new RefundRepository();
    }

    @Bean
    Ids ids() {
        return new Ids();
    }

    /** The database, the durable records' phases, the replay counter and the clock: what every stage shares. */
    @Bean
    Storage storage(
            Jdbc jdbc, ChargeRepository charges, AtomicPhases phases, ReplayCounter replays, InstantSource clock) {
        return new Storage(jdbc, charges, phases, replays, clock);
    }

    @Bean
    ChargeExecutor chargeExecutor(
            Storage storage,
            PspClient psp,
            Ledger ledger,
            TenantAccounts accounts,
            ChargeAnswers answers,
            ObjectProvider<ChargeObserver> observer,
            ChargeEvents events,
            PaymentsProperties properties) {
        return new ChargeExecutor(
                storage,
                psp,
                ledger,
                accounts,
                answers,
                observer.getIfAvailable(() -> ChargeObserver.NONE),
                events,
                properties.commitBatch().batcher(storage.jdbc()));
    }

    @Bean
    ChargePipeline chargePipeline(
            Storage storage,
            IdempotentRoutes routes,
            ChargeExecutor executor,
            Ids ids,
            ObjectProvider<ChargeObserver> observer,
            PaymentsProperties properties) {
        return new ChargePipeline(
                storage,
                routes,
                executor,
                ids,
                observer.getIfAvailable(() -> ChargeObserver.NONE),
                properties.commitBatch().batcher(storage.jdbc()));
    }

    @Bean
    ChargeOperations chargeOperations(
            Storage storage, ChargeExecutor executor, PspClient psp, PaymentsProperties properties) {
        return new ChargeOperations(storage, durablePolicy(properties), executor, psp);
    }

    @Bean
    RecoveryWorker recoveryWorker(
            Storage storage,
            ChargeExecutor executor,
            AuthorizationExpiry expiry,
            PaymentsProperties properties,
            ObjectProvider<PhaseKind> otherKinds) {
        PaymentsProperties.Recovery recovery = properties.recovery();
        return new RecoveryWorker(
                storage,
                durablePolicy(properties),
                executor,
                new RecoveryWorker.Settings(recovery.enabled(), recovery.purgeInterval()),
                otherKinds.orderedStream().toList(),
                expiry);
    }

    @Bean
    ChargeActionRepository chargeActionRepository() {
        return new ChargeActionRepository();
    }

    @Bean
    ChargeActions chargeActions(
            Storage storage,
            ChargeActionRepository actions,
            IdempotentRoutes routes,
            PspClient psp,
            Ledger ledger,
            ChargeActionAnswers answers,
            ChargeEvents events,
            Ids ids) {
        return new ChargeActions(storage, actions, routes, psp, ledger, answers, events, ids);
    }

    /**
     * Voids authorizations older than {@code exactly.payments.authorization-ttl} (7 days), every
     * {@code recovery.interval}, at most 100 a round, where recovery runs.
     */
    @Bean
    AuthorizationExpiry authorizationExpiry(
            ChargeActions actions,
            InstantSource clock,
            PaymentsProperties properties,
            @Value("${exactly.payments.authorization-ttl:7d}") Duration ttl) {
        return new AuthorizationExpiry(
                actions,
                clock,
                new AuthorizationExpiry.Settings(ttl, properties.recovery().interval(), 100));
    }

    /** The worker's resumes hold pooled connections: they must leave some to the requests. */
    static void checkRecoveryParallelism(int parallelism, int poolSize) {
        if (parallelism >= poolSize) {
            throw new IllegalArgumentException("exactly.payments.recovery.parallelism (" + parallelism
                    + ") must be below exactly.payments.pool-size (" + poolSize + "): each charge the worker resumes "
                    + "holds a connection while it finishes, and requests need the rest (a pool of one connection "
                    + "cannot serve both: set exactly.payments.pool-size to 2 or more)");
        }
    }

    /** Phases 2 and 3 of refunds; also the recovery worker's {@link PhaseKind} for refunds. */
    @Bean
    RefundExecutor refundExecutor(
            Storage storage,
            RefundRepository refunds,
            PspClient psp,
            Ledger ledger,
            TenantAccounts accounts,
            RefundAnswers answers,
            Outbox outbox,
            ObjectProvider<RefundObserver> observer) {
        return new RefundExecutor(
                storage,
                refunds,
                psp,
                ledger,
                accounts,
                answers,
                outbox,
                observer.getIfAvailable(() -> RefundObserver.NONE));
    }

    @Bean
    RefundService refundService(
            Storage storage,
            RefundRepository refunds,
            IdempotentRoutes routes,
            RefundExecutor executor,
            RefundAnswers answers,
            Ids ids,
            ObjectProvider<RefundObserver> observer) {
        return new RefundService(
                storage, refunds, routes, executor, answers, ids, observer.getIfAvailable(() -> RefundObserver.NONE));
    }

    @Bean
    KeyStatus keyStatus(AtomicPhases phases, ReplayCounter replays, Jdbc jdbc) {
        return new KeyStatus(phases, replays, jdbc);
    }

    @Bean
    LedgerQueries ledgerQueries(Ledger ledger, TenantAccounts accounts) {
        return new LedgerQueries(ledger, accounts);
    }
}
