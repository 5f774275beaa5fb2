package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The HTTP contract on the PostgreSQL store, on the application's own pooled DataSource (configured with
 * {@code spring.datasource.*}) in a fresh schema, whose table the starter creates
 * ({@code exactly.idempotency.postgres.migrate=true}).
 */
class PostgresStoreHttpTest extends HttpContractTest {

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("starter_http");
        registry.add("spring.autoconfigure.exclude", () -> "");
        registry.add("spring.datasource.url", schema::getUrl);
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> "12");
        registry.add("exactly.idempotency.store", () -> "postgres");
        registry.add("exactly.idempotency.postgres.migrate", () -> "true");
    }

    @Autowired
    DataSource dataSource;

    @Override
    String storeName() {
        return "PostgresIdempotencyStore";
    }

    @Test
    void theStarterCreatedTheTableInTheApplicationsSchema() throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery("SELECT to_regclass('idempotency_records') IS NOT NULL")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getBoolean(1)).isTrue();
        }
    }
}
