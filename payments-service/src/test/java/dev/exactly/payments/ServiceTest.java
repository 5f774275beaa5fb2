package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.ledger.Ledger;
import dev.exactly.payments.config.ProcessorConfiguration;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.psp.PspSimulator;
import dev.exactly.testing.TestPostgres;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the service tests share: a real HTTP client against the service on a random port, a fresh
 * PostgreSQL schema per test class (the ledger's functions must work outside {@code public}), and
 * access to the in-process processor's books.
 */
public abstract class ServiceTest {
    public static final String ACME = "sk_demo_acme";
    public static final String GLOBEX = "sk_demo_globex";
    public static final String OPERATOR = "sk_demo_operator";

    protected static final JsonMapper JSON = JsonMapper.builder().build();
    protected static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(30))
            .build();

    @LocalServerPort
    protected int port;

    @Autowired
    protected ProcessorConfiguration.InProcessProcessor processor;

    @Autowired
    protected Jdbc jdbc;

    @Autowired
    protected Ledger ledger;

    /** Points the service at a new schema and sets the properties every test class shares. */
    protected static void commonProperties(DynamicPropertyRegistry registry, String prefix) {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema(prefix);
        String url = TestPostgres.jdbcUrl();
        String jdbcUrl = url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema.getCurrentSchema();
        registry.add("exactly.payments.database-url", () -> jdbcUrl);
        registry.add("exactly.payments.demo", () -> "true");
    }

    @BeforeEach
    void resetProcessor() {
        psp().clearFaults();
    }

    protected PspSimulator psp() {
        return processor.simulator().orElseThrow();
    }

    /** A response with its body as text and parsed JSON. */
    public record Answer(int status, byte[] body, java.net.http.HttpHeaders headers) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        public JsonNode json() {
            return JSON.readTree(body);
        }

        public String header(String name) {
            return headers.firstValue(name).orElse("");
        }

        /** The problem type's slug, e.g. {@code validation-failed}. */
        public String problemType() {
            String type = json().get("type").stringValue();
            return type.substring(type.lastIndexOf('/') + 1);
        }
    }

    protected Answer post(String path, String apiKey, String idempotencyKey, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (apiKey != null) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        if (idempotencyKey != null) {
            b.header("Idempotency-Key", idempotencyKey);
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return send(b.build());
    }

    protected Answer get(String path, String apiKey) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(60))
                .GET();
        if (apiKey != null) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        return send(b.build());
    }

    protected Answer send(HttpRequest request) {
        try {
            HttpResponse<byte[]> r = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
            return new Answer(r.statusCode(), r.body(), r.headers());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    protected URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    protected static String charge(long amount, String customer) {
        return "{\"amount\":" + amount + ",\"currency\":\"usd\",\"customer\":\"" + customer + "\"}";
    }

    protected static String charge(long amount, String customer, String source) {
        return "{\"amount\":" + amount + ",\"currency\":\"usd\",\"customer\":\"" + customer + "\",\"source\":\""
                + source + "\"}";
    }

    protected static String refund(String chargeId, long amount) {
        return "{\"charge\":\"" + chargeId + "\",\"amount\":" + amount + "}";
    }

    /** Refunds the processor made under a refund's downstream key (its refund log). */
    protected long processorRefunds(String refundId) {
        return psp().refunds().stream()
                .filter(r -> r.idempotencyKey().equals("exactly_" + refundId))
                .count();
    }

    /** Journal entries referring to a refund. */
    protected long refundEntriesOf(String refundId) {
        return count("SELECT count(*) FROM ledger_entry WHERE external_ref = ?", "refund:" + refundId);
    }

    /** Rows of a query against the service's schema. */
    protected List<Map<String, Object>> rows(String sql, Object... params) {
        return jdbc.query(
                sql,
                s -> {
                    for (int i = 0; i < params.length; i++) {
                        s.setObject(i + 1, params[i]);
                    }
                },
                rs -> {
                    Map<String, Object> row = new java.util.LinkedHashMap<>();
                    for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                        row.put(rs.getMetaData().getColumnLabel(i), rs.getObject(i));
                    }
                    return row;
                });
    }

    protected long count(String sql, Object... params) {
        return ((Number) rows(sql, params).getFirst().values().iterator().next()).longValue();
    }

    /** The charge row's status. */
    protected String chargeStatus(String chargeId) {
        return (String) rows("SELECT status FROM payments_charge WHERE id = ?", chargeId)
                .getFirst()
                .get("status");
    }

    /** The charge id created under a key, read from the database (the request may have died). */
    protected String chargeIdByDownstreamPrefix(String customer) {
        return (String)
                rows("SELECT id FROM payments_charge WHERE customer = ? ORDER BY created_at DESC LIMIT 1", customer)
                        .getFirst()
                        .get("id");
    }

    /** Journal entries referring to a charge. */
    protected long entriesOf(String chargeId) {
        return count("SELECT count(*) FROM ledger_entry WHERE external_ref = ?", "charge:" + chargeId);
    }

    protected void assertLedgerBalanced() {
        assertThat(ledger.trialBalance().isBalanced())
                .as("global trial balance")
                .isTrue();
    }
}
