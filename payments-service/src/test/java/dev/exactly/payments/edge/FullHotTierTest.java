package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.payments.ServiceTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The in-memory hot tier in front of the durable tier never refuses a charge because it is full: finished
 * records make room (oldest first), a retry of an evicted key is answered by the durable tier byte for
 * byte, and health stays UP. Here the hot tier holds five records and takes thirty charges.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class FullHotTierTest extends ServiceTest {

    @Autowired
    InMemoryIdempotencyStore hot;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_full_hot");
        registry.add("exactly.idempotency.memory.max-entries", () -> "5");
    }

    @Test
    void aFullHotTierEvictsFinishedRecordsAndTheDurableTierAnswersTheirRetries() {
        assertThat(hot.stats().whenFull()).isEqualTo(InMemoryIdempotencyStore.WhenFull.EVICT_FINISHED);
        List<Answer> first = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            Answer a = post("/v1/charges", ACME, "full-" + i, charge(100 + i, "cus_full"));
            assertThat(a.status()).as("charge %d: %s", i, a.text()).isEqualTo(201);
            first.add(a);
        }
        assertThat(hot.stats().evictions()).as("finished records made room").isGreaterThanOrEqualTo(25);
        assertThat(hot.stats().refusals()).isZero();
        assertThat(hot.size()).isLessThanOrEqualTo(5);

        for (int i = 0; i < 30; i += 7) {
            Answer again = post("/v1/charges", ACME, "full-" + i, charge(100 + i, "cus_full"));
            assertThat(again.status()).isEqualTo(201);
            assertThat(again.body())
                    .as("retry of an evicted key %d", i)
                    .isEqualTo(first.get(i).body());
            assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        }
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_full'"))
                .isEqualTo(30);
        Answer health = get("/actuator/health", null);
        assertThat(health.status()).isEqualTo(200);
        assertThat(health.text()).contains("UP");
    }
}
