package dev.exactly.examples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.CurlWalkthrough;
import dev.exactly.testing.CurlWalkthrough.Answer;
import dev.exactly.testing.TestRedis;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

/**
 * The example application, with the README's dependencies and properties, answers the README's curl
 * walk-through (run with curl, over real HTTP) as each of its comments says; only the Redis server and a
 * key prefix of this run are set here.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TryItTest {

    @DynamicPropertySource
    static void sharedRedis(DynamicPropertyRegistry registry) {
        registry.add("exactly.idempotency.redis.uri", TestRedis::uri);
        registry.add("exactly.idempotency.redis.key-prefix", () -> "exactly:example:" + UUID.randomUUID() + ":");
    }

    @LocalServerPort
    int port;

    @Autowired
    ChargeController charges;

    @Test
    void theReadmeWalkThroughAnswersAsItSays() {
        List<Answer> answers = CurlWalkthrough.commands(Path.of(System.getProperty("example.walkthrough"))).stream()
                .map(command -> CurlWalkthrough.run(command, port))
                .toList();

        assertThat(answers).hasSize(7).extracting(Answer::mismatch).containsOnlyNulls();
        Answer charge = answers.get(0);
        Answer retry = answers.get(1);
        assertThat(charge.header("Idempotent-Replayed")).isNull();
        assertThat(retry.body()).isEqualTo(charge.body()).contains("\"id\":\"ch_1\"");
        assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(charges.chargesMade()).as("the charge handler ran once").isEqualTo(1);
        assertThat(JsonMapper.builder()
                        .build()
                        .readTree(answers.get(6).body())
                        .at("/components/idempotency/status")
                        .asString())
                .isEqualTo("UP");
    }
}
