package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseResumer;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.testing.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transactional API in a Spring application: TransactionalPhases joins the transaction a
 * TransactionTemplate started, on the connection its transaction manager bound, so the claim, the
 * checkpoint and the answer commit and roll back with JdbcTemplate's writes; a PhaseResumer bean gets
 * abandoned phases back from recovery.
 */
class AtomicPhasesAutoConfigurationTest {
    private static final IdempotencyPolicy SHORT = IdempotencyPolicy.custom()
            .lease(Duration.ofMillis(300))
            .retention(Duration.ofMinutes(10))
            .keepAlive(KeepAlive.disabled())
            .build();

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class,
                    TransactionAutoConfiguration.class,
                    IdempotencyAutoConfiguration.class,
                    AtomicPhasesAutoConfiguration.class))
            .withPropertyValues(
                    "exactly.idempotency.routes[0].path=/v1/shipments", "exactly.idempotency.postgres.migrate=true");

    private static String[] database(String prefix) {
        DataSource schema = TestPostgres.freshSchema(prefix);
        try (var c = schema.getConnection();
                var s = c.createStatement()) {
            s.execute("CREATE TABLE shipments (id text PRIMARY KEY, label text)");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return new String[] {"spring.datasource.url=" + ((PGSimpleDataSource) schema).getUrl()};
    }

    private static IdempotencyRequest request(String key, IdempotencyPolicy policy) {
        return IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/shipments", new IdempotencyKey(key)),
                new Fingerprint("sha256-jcs", key),
                policy);
    }

    private static StoredResponse answer(String body) {
        return new StoredResponse(
                201, Map.of("content-type", List.of("application/json")), body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void thePhaseCommitsAndRollsBackWithTheServicesOwnWrites() {
        runner.withPropertyValues(database("phases_tx"))
                .withPropertyValues("exactly.idempotency.phases.enabled=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    TransactionalPhases phases = context.getBean(TransactionalPhases.class);
                    TransactionTemplate tx = context.getBean(TransactionTemplate.class);
                    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                    IdempotencyRequest rolledBack = request("ship-rb-" + UUID.randomUUID(), SHORT);
                    tx.executeWithoutResult(status -> {
                        Phase phase = ((PhaseStart.Owned) phases.begin(rolledBack)).phase();
                        jdbc.update("INSERT INTO shipments (id) VALUES (?)", "shp-rb");
                        assertThat(phases.checkpoint(phase, Checkpoint.of("created")))
                                .isTrue();
                        status.setRollbackOnly();
                    });
                    assertThat(phases.find(rolledBack.key()))
                            .as("the claim rolled back with the insert")
                            .isEmpty();
                    assertThat(jdbc.queryForObject("SELECT count(*) FROM shipments", Long.class))
                            .isZero();

                    IdempotencyRequest committed = request("ship-ok-" + UUID.randomUUID(), SHORT);
                    tx.executeWithoutResult(status -> {
                        Phase phase = ((PhaseStart.Owned) phases.begin(committed)).phase();
                        jdbc.update("INSERT INTO shipments (id, label) VALUES (?, ?)", "shp-ok", "LBL-1");
                        assertThat(phases.finish(phase, RecordStatus.COMPLETED, answer("{\"id\":\"shp-ok\"}")))
                                .isTrue();
                    });
                    assertThat(phases.find(committed.key()).orElseThrow().status())
                            .isEqualTo(RecordStatus.COMPLETED);
                    PhaseStart again = tx.execute(status -> phases.begin(committed));
                    assertThat(again).isInstanceOf(PhaseStart.Replay.class);

                    assertThatThrownBy(() -> phases.begin(committed))
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("inside a transaction");
                });
    }

    @Test
    void aResumerBeanGetsAbandonedPhasesBackFromRecovery() {
        List<Phase> resumed = new CopyOnWriteArrayList<>();
        runner.withPropertyValues(database("phases_recovery"))
                .withPropertyValues(
                        "exactly.idempotency.phases.enabled=true",
                        "exactly.idempotency.phases.recovery.interval=100ms",
                        "exactly.idempotency.lease=5s")
                .withBean(PhaseResumer.class, () -> resumed::add)
                .run(context -> {
                    TransactionalPhases phases = context.getBean(TransactionalPhases.class);
                    TransactionTemplate tx = context.getBean(TransactionTemplate.class);
                    IdempotencyRequest abandoned = request("ship-abandoned-" + UUID.randomUUID(), SHORT);
                    tx.executeWithoutResult(status -> {
                        Phase phase = ((PhaseStart.Owned) phases.begin(abandoned)).phase();
                        phases.checkpoint(phase, new Checkpoint("created", "shp-9".getBytes(StandardCharsets.UTF_8)));
                    });
                    // the owner "died" here; recovery takes the phase over once its 300 ms lease ran out
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> resumed.stream().anyMatch(p -> p.key().equals(abandoned.key())));
                    Phase phase = resumed.stream()
                            .filter(p -> p.key().equals(abandoned.key()))
                            .findFirst()
                            .orElseThrow();
                    assertThat(phase.checkpoint())
                            .isEqualTo(new Checkpoint("created", "shp-9".getBytes(StandardCharsets.UTF_8)));
                    assertThat(phase.policy().lease())
                            .as("recovery owns it under the configured lease")
                            .isEqualTo(Duration.ofSeconds(5));
                });
    }

    @Test
    void offUnlessAskedForOrTheStoreIsPostgres() {
        runner.withPropertyValues(database("phases_off")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(AtomicPhases.class);
        });
        runner.withPropertyValues(database("phases_store"))
                .withPropertyValues("exactly.idempotency.store=postgres")
                .run(context -> {
                    assertThat(context).hasSingleBean(TransactionalPhases.class);
                    assertThat(context.getBean(AtomicPhases.class).store())
                            .as("the phases share the application's PostgreSQL store")
                            .isSameAs(context.getBean(dev.exactly.idempotency.spi.IdempotencyStore.class));
                });
        runner.withPropertyValues(database("phases_bad"))
                .withPropertyValues(
                        "exactly.idempotency.phases.enabled=true", "exactly.idempotency.phases.recovery.parallelism=0")
                .run(context -> assertThat(context).hasFailed());
    }
}
