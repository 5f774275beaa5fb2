package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.TestHttp.ACME;
import static dev.exactly.idempotency.spring.boot.TestHttp.body;
import static dev.exactly.idempotency.spring.boot.TestHttp.ref;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.spring.boot.app.TestApplication;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * With tracing on, each guarded execution is a span {@code exactly.idempotency} inside the HTTP request's
 * span, tagged by route, method and outcome (never the key or the tenant), with the engine's events; and
 * with metrics, the same observation is the timer {@code exactly.idempotency}.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(ObservationTracingTest.Tracing.class)
class ObservationTracingTest {

    @TestConfiguration(proxyBeanMethods = false)
    static class Tracing {
        @Bean
        SimpleTracer tracer() {
            return new SimpleTracer();
        }

        @Bean
        DefaultTracingObservationHandler tracingHandler(SimpleTracer tracer) {
            return new DefaultTracingObservationHandler(tracer);
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    SimpleTracer tracer;

    @Autowired
    MeterRegistry registry;

    TestHttp http;

    @BeforeEach
    void client() {
        http = new TestHttp(port);
    }

    @Test
    void eachExecutionIsASpanInsideTheRequestsSpanWithItsOutcomeAndEvents() throws Exception {
        String ref = ref();
        String key = "trace-" + ref;
        assertThat(http.post("/v1/charges", key, ACME, body(ref), null).statusCode())
                .isEqualTo(201);
        assertThat(http.post("/v1/charges", key, ACME, body(ref), null).statusCode())
                .isEqualTo(201);
        assertThat(http.post("/v1/charges", key, ACME, body(ref).replace("100", "999"), null)
                        .statusCode())
                .isEqualTo(422);

        await().atMost(Duration.ofSeconds(10)).until(() -> idempotencySpans().size() >= 3);
        List<SimpleSpan> spans = idempotencySpans();
        assertThat(spans)
                .extracting(s -> s.getTags().get("outcome"))
                .containsExactly("executed", "replayed", "mismatch");
        assertThat(spans).allSatisfy(span -> {
            assertThat(span.getName()).isEqualTo("idempotency POST /v1/charges");
            assertThat(span.getTags()).containsEntry("route", "/v1/charges").containsEntry("method", "POST");
            assertThat(span.getTags().toString()).doesNotContain(key).doesNotContain("acme");
            SimpleSpan parent = byId(span.getParentId());
            assertThat(parent.getTraceId()).isEqualTo(span.getTraceId());
            assertThat(parent.getName()).as("the HTTP request's span").containsIgnoringCase("post");
        });
        assertThat(events(spans.get(0))).containsExactly("claim");
        assertThat(events(spans.get(1))).containsExactly("replay");
        assertThat(events(spans.get(2))).containsExactly("mismatch");

        // the same observation as a timer, tagged by outcome
        assertThat(registry.get("exactly.idempotency")
                        .tags("route", "/v1/charges", "method", "POST", "outcome", "replayed")
                        .timer()
                        .count())
                .isPositive();
        assertThat(registry.get(dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.CLAIMS)
                        .tags("route", "/v1/charges")
                        .counter()
                        .count())
                .as("the counters are kept")
                .isPositive();
    }

    private List<SimpleSpan> idempotencySpans() {
        return tracer.getSpans().stream()
                .filter(s -> s.getName().startsWith("idempotency "))
                .toList();
    }

    private SimpleSpan byId(String spanId) {
        return tracer.getSpans().stream()
                .filter(s -> s.getSpanId().equals(spanId))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no span " + spanId));
    }

    private static List<String> events(SimpleSpan span) {
        return span.getEvents().stream().map(Map.Entry::getValue).toList();
    }
}
