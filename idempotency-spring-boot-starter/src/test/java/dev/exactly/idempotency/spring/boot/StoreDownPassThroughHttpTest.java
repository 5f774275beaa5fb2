package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.spring.boot.app.Handlers;
import dev.exactly.idempotency.spring.boot.app.TestApplication;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code when-store-unavailable: pass-through} with a Redis store on a port where nothing listens: a
 * guarded request reaches its handler unguarded (nothing recorded, its retry runs again), and the log says
 * so instead of promising a 503.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class StoreDownPassThroughHttpTest {

    @DynamicPropertySource
    static void closedPort(DynamicPropertyRegistry registry) {
        StoreDownHttpTest.redisOnAClosedPort(registry);
        registry.add("exactly.idempotency.when-store-unavailable", () -> "pass-through");
    }

    @LocalServerPort
    int port;

    @Autowired
    Handlers handlers;

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aGuardedRequestRunsUnguardedAndTheLogSaysSo(CapturedOutput output) throws Exception {
        TestHttp http = new TestHttp(port);
        String ref = TestHttp.ref();
        HttpResponse<String> first = http.post("/v1/charges", "k-" + ref, TestHttp.ACME, TestHttp.body(ref), null);
        HttpResponse<String> again = http.post("/v1/charges", "k-" + ref, TestHttp.ACME, TestHttp.body(ref), null);

        for (HttpResponse<String> response : java.util.List.of(first, again)) {
            assertThat(response.statusCode()).as(response.body()).isBetween(200, 299);
            assertThat(response.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER))
                    .isEmpty();
            assertThat(response.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                    .isEmpty();
        }
        assertThat(handlers.runs(ref)).as("unguarded: the retry ran again").isEqualTo(2);
        assertThat(output)
                .containsPattern("WARN .* Idempotency store failed on POST /v1/charges: guarded requests "
                        + "pass through to their handlers unguarded \\(when-store-unavailable: pass-through\\)");
    }
}
