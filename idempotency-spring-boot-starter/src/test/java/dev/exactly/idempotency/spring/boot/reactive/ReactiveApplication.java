package dev.exactly.idempotency.spring.boot.reactive;

import dev.exactly.idempotency.spring.Idempotent;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** A WebFlux application whose routes are declared with {@code @Idempotent} (configuration: reactive.properties). */
@SpringBootApplication
public class ReactiveApplication {

    /** Non-blocking handlers; each answer carries a fresh number, so a replay is told from a second run. */
    @RestController
    public static class Charges {
        public final AtomicInteger runs = new AtomicInteger();

        @PostMapping("/v1/charges")
        @Idempotent
        Mono<ResponseEntity<String>> charge(@RequestBody String body) {
            return Mono.fromSupplier(() -> created(runs.incrementAndGet()));
        }

        @PostMapping("/v1/slow")
        @Idempotent(inFlight = Idempotent.InFlight.WAIT, maxWait = "10s")
        Mono<ResponseEntity<String>> slow(@RequestBody String body) {
            return Mono.delay(Duration.ofMillis(500)).map(tick -> created(runs.incrementAndGet()));
        }

        private static ResponseEntity<String> created(int run) {
            return ResponseEntity.status(201)
                    .contentType(MediaType.APPLICATION_JSON)
                    .body("{\"id\":\"ch_" + run + "\"}");
        }
    }
}
