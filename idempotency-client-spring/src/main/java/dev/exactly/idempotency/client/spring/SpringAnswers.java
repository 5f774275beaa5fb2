package dev.exactly.idempotency.client.spring;

import dev.exactly.idempotency.client.IdempotentResponse;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Spring's answers as the client's {@link IdempotentResponse}. */
final class SpringAnswers {
    /** The most bytes of an answer read to classify it or to report it. */
    static final int MAX_READ = 1024 * 1024;

    private SpringAnswers() {}

    static HttpHeaders headers(org.springframework.http.HttpHeaders spring) {
        Map<String, List<String>> map = new LinkedHashMap<>();
        spring.forEach((name, values) -> map.put(name, List.copyOf(values)));
        return HttpHeaders.of(map, (name, value) -> true);
    }

    static IdempotentResponse answer(
            int status, org.springframework.http.HttpHeaders headers, byte[] body, String key, int attempts, URI uri) {
        HttpHeaders h = headers(headers);
        return new IdempotentResponse(status, h, body, key, attempts, IdempotentResponse.isReplay(h), uri);
    }
}
