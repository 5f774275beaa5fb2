package dev.exactly.idempotency.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.client.internal.ProblemDocument;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    @Test
    void defaultsFollowStripe() {
        RetryPolicy p = RetryPolicy.ofDefaults();

        assertThat(p.maxAttempts()).isEqualTo(6);
        assertThat(p.backoff().ceiling(1)).isEqualTo(Duration.ofMillis(500));
        assertThat(p.backoff().ceiling(2)).isEqualTo(Duration.ofSeconds(1));
        assertThat(p.backoff().ceiling(3)).isEqualTo(Duration.ofSeconds(2));
        assertThat(p.backoff().ceiling(4)).isEqualTo(Duration.ofSeconds(4));
        assertThat(p.backoff().ceiling(5)).isEqualTo(Duration.ofSeconds(5));
        assertThat(p.backoff().ceiling(60)).isEqualTo(Duration.ofSeconds(5));
        assertThat(p.retryableStatuses()).containsExactlyInAnyOrder(409, 429, 502, 503, 504);
        assertThat(RetryPolicy.from(p).build()).isEqualTo(p);
        assertThat(RetryPolicy.noRetries().maxAttempts()).isEqualTo(1);
    }

    @Test
    void theBuilderValidates() {
        assertThatThrownBy(() -> RetryPolicy.custom().maxAttempts(0).build()).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> RetryPolicy.custom().maxAttempts(101).build()).hasMessageContaining("maxAttempts");
        assertThatThrownBy(
                        () -> RetryPolicy.custom().initialDelay(Duration.ZERO).build())
                .hasMessageContaining("initialDelay");
        assertThatThrownBy(() ->
                        RetryPolicy.custom().maxDelay(Duration.ofMillis(100)).build())
                .hasMessageContaining("maxDelay");
        assertThatThrownBy(() ->
                        RetryPolicy.custom().deadline(Duration.ofMillis(-1)).build())
                .hasMessageContaining("deadline");
        assertThatThrownBy(
                        () -> RetryPolicy.custom().attemptTimeout(Duration.ZERO).build())
                .hasMessageContaining("attemptTimeout");
        assertThatThrownBy(() ->
                        RetryPolicy.custom().retryableStatuses(Set.of(422)).build())
                .hasMessageContaining("422");
        assertThatThrownBy(() ->
                        RetryPolicy.custom().retryableStatuses(Set.of(200)).build())
                .hasMessageContaining("4xx or 5xx");
        assertThat(RetryPolicy.custom()
                        .retryableStatuses(Set.of(500, 503))
                        .build()
                        .retries(500))
                .isTrue();
    }

    @Test
    void problemDocumentsAreReadWithoutALibrary() {
        ProblemDocument p = ProblemDocument.parse("""
                {"nested":{"type":"wrong","a":[1,{"b":"c"}]},"type":"https:\\/\\/exactly.dev\\/problems\\/idempotency-key-reused",
                 "n":-1.5e3,"t":true,"z":null,"code":"idempotency_key_reused","u":"\\u00e9"}""".getBytes(StandardCharsets.UTF_8));

        assertThat(p.string("type")).contains(IdempotencyKeyReusedException.PROBLEM_TYPE);
        assertThat(p.string("code")).contains("idempotency_key_reused");
        assertThat(p.string("u")).contains("\u00e9");
        assertThat(p.string("a")).isEmpty();
        assertThat(ProblemDocument.parse("not json".getBytes(StandardCharsets.UTF_8))
                        .string("type"))
                .isEmpty();
        assertThat(ProblemDocument.parse("{\"type\":\"x\"".getBytes(StandardCharsets.UTF_8))
                        .string("type"))
                .isEmpty();
        assertThat(ProblemDocument.parse("[".repeat(10_000).getBytes(StandardCharsets.UTF_8))
                        .string("type"))
                .isEmpty();
        assertThat(ProblemDocument.parse(("{\"a\":" + "[".repeat(10_000)).getBytes(StandardCharsets.UTF_8))
                        .string("a"))
                .isEmpty();
    }

    @Test
    void onlyA422WithTheReusedTypeOrCodeIsAReusedKey() {
        byte[] reused =
                "{\"type\":\"https://exactly.dev/problems/idempotency-key-reused\"}".getBytes(StandardCharsets.UTF_8);

        assertThat(IdempotencyKeyReusedException.isKeyReused(422, reused)).isTrue();
        assertThat(IdempotencyKeyReusedException.isKeyReused(409, reused)).isFalse();
        assertThat(IdempotencyKeyReusedException.isKeyReused(
                        422, "{\"type\":\"https://exactly.dev/problems/validation\"}".getBytes(StandardCharsets.UTF_8)))
                .isFalse();
        assertThat(IdempotencyKeyReusedException.isKeyReused(
                        422, "{\"detail\":\"idempotency_key_reused\"}".getBytes(StandardCharsets.UTF_8)))
                .isFalse();
    }
}
