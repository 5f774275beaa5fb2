package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.randomFingerprint;
import static dev.exactly.idempotency.postgres.TestDatabase.randomKey;
import static dev.exactly.idempotency.postgres.TestDatabase.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.testing.TestRedis;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.postgresql.ds.PGSimpleDataSource;

/** Nothing listens on the port: every operation fails closed, quickly. */
class UnavailableTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    private static PGSimpleDataSource unreachable() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl("jdbc:postgresql://127.0.0.1:" + TestRedis.freePort() + "/test?user=postgres");
        return ds;
    }

    @Test
    void everyOperationFailsClosedWithStoreUnavailable() throws Exception {
        PGSimpleDataSource ds = unreachable();
        long start = System.nanoTime();
        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(ds)) {
            ScopeKey key = randomKey();
            OwnerToken owner = OwnerToken.random();
            failsClosed(() -> store.claim(key, randomFingerprint(), LONG, LONG));
            failsClosed(() -> store.complete(key, owner, RecordStatus.COMPLETED, response(201, "{}")));
            failsClosed(() -> store.release(key, owner));
            failsClosed(() -> store.renew(key, owner, LONG));
            failsClosed(() -> store.find(key));
            failsClosed(() -> store.purgeExpired(100));
            failsClosed(() -> PostgresIdempotencyStore.migrate(ds));
            // waiting marks the record as waited for: that fails closed too, and the listener keeps retrying
            failsClosed(() -> store.subscribe(key));
            assertThat(store.isListening()).isFalse();
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(ds.getLoginTimeout()).as("login timeout applied").isEqualTo(3);
    }

    @Test
    void anExplicitLoginTimeoutIsKept() throws SQLException {
        PGSimpleDataSource ds = unreachable();
        ds.setLoginTimeout(7);
        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(ds)) {
            assertThat(ds.getLoginTimeout()).isEqualTo(7);
        }
    }

    private static void failsClosed(Executable operation) {
        assertThatThrownBy(operation::execute)
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("could not reach PostgreSQL")
                .hasMessageContaining("08001")
                .hasCauseInstanceOf(SQLException.class)
                .satisfies(e ->
                        assertThat(((StoreUnavailableException) e).code()).isEqualTo("idempotency_store_unavailable"));
    }
}
