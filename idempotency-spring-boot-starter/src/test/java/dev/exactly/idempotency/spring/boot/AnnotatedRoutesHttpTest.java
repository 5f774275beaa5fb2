package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.spring.boot.annotated.AnnotatedApplication;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/**
 * The whole HTTP contract with routes declared only by {@code @Idempotent} on the controller's methods (no
 * {@code exactly.idempotency.routes}), on the in-memory store.
 */
@SpringBootTest(
        classes = AnnotatedApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.config.name=annotated")
class AnnotatedRoutesHttpTest extends HttpContractTest {

    @Autowired
    FilterRegistrationBean<IdempotencyFilter> registration;

    @Override
    String storeName() {
        return "InMemoryIdempotencyStore";
    }

    @Test
    void theRoutesComeFromTheAnnotationsAlone() {
        assertThat(registration.getFilter().routes())
                .extracting(IdempotentRoute::method, IdempotentRoute::pathTemplate, IdempotentRoute::keyRequired)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("POST", "/v1/charges", true),
                        org.assertj.core.groups.Tuple.tuple("POST", "/v1/notes", false),
                        org.assertj.core.groups.Tuple.tuple("POST", "/v1/transfers", true));
        IdempotentRoute transfers = registration.getFilter().routes().stream()
                .filter(r -> r.pathTemplate().equals("/v1/transfers"))
                .findFirst()
                .orElseThrow();
        assertThat(transfers.policy().inFlight())
                .as("maxWait from a placeholder")
                .isEqualTo(InFlightPolicy.waitUpTo(Duration.ofSeconds(30)));
    }
}
