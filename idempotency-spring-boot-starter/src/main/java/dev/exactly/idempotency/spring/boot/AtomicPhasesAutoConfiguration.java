package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.PhaseListener;
import dev.exactly.idempotency.postgres.PhaseRecovery;
import dev.exactly.idempotency.postgres.PhaseResumer;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.RecoveryPolicy;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * The transactional API on the application's {@code DataSource}: {@link AtomicPhases} and
 * {@link TransactionalPhases} (which joins Spring-managed transactions), and, when the application
 * defines a {@link PhaseResumer} bean, a recovery worker that resumes abandoned phases with it.
 *
 * <p>On with {@code exactly.idempotency.store=postgres} (then it shares that store) or with
 * {@code exactly.idempotency.phases.enabled=true} (then it has a PostgreSQL store of its own on the
 * DataSource, never a bean: the hot tier keeps its own store). The table is checked (and, with
 * {@code exactly.idempotency.postgres.migrate=true}, created) at startup like the store's.
 */
@AutoConfiguration(
        after = IdempotencyAutoConfiguration.class,
        afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass({AtomicPhases.class, DataSourceUtils.class})
@ConditionalOnSingleCandidate(DataSource.class)
@Conditional(AtomicPhasesAutoConfiguration.OnPhases.class)
@EnableConfigurationProperties({AtomicPhasesProperties.class, IdempotencyProperties.class})
public class AtomicPhasesAutoConfiguration {

    /** {@code store=postgres}, or {@code phases.enabled=true}. */
    static final class OnPhases extends AnyNestedCondition {
        OnPhases() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(name = IdempotencyProperties.PREFIX + ".store", havingValue = "postgres")
        static final class PostgresStore {}

        @ConditionalOnProperty(name = AtomicPhasesProperties.PREFIX + ".enabled", havingValue = "true")
        static final class Enabled {}
    }

    /** The store the phases use: the application's PostgreSQL store, or one of their own (closed with the context). */
    static final class PhasesStore implements AutoCloseable {
        private final PostgresIdempotencyStore store;
        private final boolean owned;

        PhasesStore(PostgresIdempotencyStore store, boolean owned) {
            this.store = store;
            this.owned = owned;
        }

        @Override
        public void close() {
            if (owned) {
                store.close();
            }
        }
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(AtomicPhases.class)
    PhasesStore atomicPhasesStore(
            DataSource dataSource, IdempotencyProperties properties, ObjectProvider<IdempotencyStore> stores) {
        if (stores.getIfUnique() instanceof PostgresIdempotencyStore shared) {
            return new PhasesStore(shared, false);
        }
        return new PhasesStore(PostgresStores.create(dataSource, properties.getPostgres()), true);
    }

    @Bean
    @ConditionalOnMissingBean
    AtomicPhases atomicPhases(
            PhasesStore store, AtomicPhasesProperties properties, ObjectProvider<PhaseListener> listener) {
        return AtomicPhases.builder(store.store)
                .recoveryPolicy(recoveryPolicy(properties.getRecovery()))
                .listener(listener.getIfUnique(() -> PhaseListener.NOOP))
                .build();
    }

    @Bean
    @ConditionalOnMissingBean
    TransactionalPhases transactionalPhases(AtomicPhases phases, DataSource dataSource) {
        return new TransactionalPhases(phases, dataSource);
    }

    /** Recovery with the application's resumer; its ownership takes the top-level lease and keep-alive. */
    @Bean
    @ConditionalOnBean(PhaseResumer.class)
    SmartLifecycle atomicPhasesRecovery(AtomicPhases phases, PhaseResumer resumer, IdempotencyProperties properties) {
        IdempotencyPolicy policy = PropertiesReader.defaultPolicy(properties);
        PhaseRecovery recovery = phases.recovery(resumer, policy);
        return new SmartLifecycle() {
            @Override
            public void start() {
                recovery.start();
            }

            @Override
            public void stop() {
                recovery.close();
            }

            @Override
            public boolean isRunning() {
                return recovery.isRunning();
            }
        };
    }

    static RecoveryPolicy recoveryPolicy(AtomicPhasesProperties.Recovery recovery) {
        try {
            return RecoveryPolicy.custom()
                    .maxAttempts(recovery.getMaxAttempts())
                    .firstDelay(recovery.getFirstDelay())
                    .maxDelay(recovery.getMaxDelay())
                    .parallelism(recovery.getParallelism())
                    .interval(recovery.getInterval())
                    .build();
        } catch (IllegalArgumentException e) {
            throw new InvalidIdempotencyPropertiesException(
                    List.of(AtomicPhasesProperties.PREFIX + ".recovery: " + e.getMessage()));
        }
    }
}
