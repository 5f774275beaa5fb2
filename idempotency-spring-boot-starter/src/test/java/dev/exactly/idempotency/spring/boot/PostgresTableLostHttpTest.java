package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.spring.boot.app.Handlers;
import dev.exactly.idempotency.spring.boot.app.TestApplication;
import dev.exactly.testing.TestPostgres;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * The store's table disappears while the application runs: every guarded request fails closed (503,
 * handler not called), the failure is logged once for the burst, with the fix, and the health endpoint
 * says the store is DOWN and why.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ExtendWith(OutputCaptureExtension.class)
class PostgresTableLostHttpTest {
    private static final Pattern LOG_LINE = Pattern.compile("WARN .* Idempotency store failed on POST /v1/charges");

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("starter_table_lost");
        registry.add("spring.autoconfigure.exclude", () -> "");
        registry.add("spring.datasource.url", schema::getUrl);
        registry.add("exactly.idempotency.store", () -> "postgres");
        registry.add("exactly.idempotency.postgres.migrate", () -> "true");
    }

    @LocalServerPort
    int port;

    @Autowired
    DataSource dataSource;

    @Autowired
    Handlers handlers;

    @Test
    void requestsFailClosedTheFailureIsLoggedOnceWithItsFixAndHealthSaysWhy(CapturedOutput output) throws Exception {
        TestHttp http = new TestHttp(port);
        String first = TestHttp.ref();
        assertThat(http.post("/v1/charges", "k-" + first, TestHttp.ACME, TestHttp.body(first), null)
                        .statusCode())
                .isEqualTo(201);
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE idempotency_records CASCADE"); // its claim function goes with it
        }

        for (int i = 0; i < 3; i++) {
            String ref = TestHttp.ref();
            HttpResponse<String> response =
                    http.post("/v1/charges", "k-" + ref, TestHttp.ACME, TestHttp.body(ref), null);
            TestHttp.assertProblem(response, 503, "idempotency_store_unavailable");
            assertThat(handlers.runs(ref)).isZero();
        }

        String log = output.getOut() + output.getErr();
        Matcher lines = LOG_LINE.matcher(log);
        int count = 0;
        while (lines.find()) {
            count++;
        }
        assertThat(count)
                .as("one line for three failures within 30 s:%n%s", log)
                .isEqualTo(1);
        // the claim statement reads the table before it calls the claim function: the missing table is named
        assertThat(log)
                .contains("guarded requests answer 503 and their handlers do not run until it answers: idempotency "
                        + "claim: PostgreSQL failed (SQLState 42P01)")
                .contains("relation \"idempotency_records\" does not exist")
                .contains("The store's table is missing: set exactly.idempotency.postgres.migrate=true to create the "
                        + "table (exactly.idempotency.postgres.table-name) at startup, or add classpath:db/idempotency to "
                        + "spring.flyway.locations");

        HttpResponse<String> health = http.get("/actuator/health");
        assertThat(health.statusCode()).isEqualTo(503);
        JsonNode idempotency = TestHttp.healthComponent(health);
        assertThat(idempotency.get("status").asString()).isEqualTo("DOWN");
        assertThat(idempotency.get("details").get("error").asString())
                .contains("StoreUnavailableException")
                .contains("relation \"idempotency_records\" does not exist");
        assertThat(idempotency.get("details").get("hint").asString())
                .startsWith("The store's table is missing: set exactly.idempotency.postgres.migrate=true");
    }
}
