package dev.exactly.idempotency.spring.boot.annotated;

import dev.exactly.idempotency.spring.Idempotent;
import dev.exactly.idempotency.spring.boot.app.Handlers;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The routes of the HTTP contract, guarded by annotation alone: {@code /v1/charges} rejects in-flight
 * duplicates, {@code /v1/transfers} coalesces them, {@code /v1/notes} takes an optional key.
 */
@RestController
class AnnotatedChargeController {
    private final Handlers handlers;

    AnnotatedChargeController(Handlers handlers) {
        this.handlers = handlers;
    }

    @PostMapping("/v1/charges")
    @Idempotent
    ResponseEntity<String> charge(@RequestBody String body, HttpServletResponse response) throws InterruptedException {
        return create(body, response);
    }

    @PostMapping("/v1/transfers")
    @Idempotent(inFlight = Idempotent.InFlight.WAIT, maxWait = "${test.transfers.max-wait}")
    ResponseEntity<String> transfer(@RequestBody String body, HttpServletResponse response)
            throws InterruptedException {
        return create(body, response);
    }

    @PostMapping("/v1/notes")
    @Idempotent(keyRequired = false)
    ResponseEntity<String> note(@RequestBody String body, HttpServletResponse response) throws InterruptedException {
        return create(body, response);
    }

    private ResponseEntity<String> create(String body, HttpServletResponse response) throws InterruptedException {
        return handlers.respond(body, response);
    }
}
