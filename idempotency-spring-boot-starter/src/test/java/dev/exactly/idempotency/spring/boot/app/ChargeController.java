package dev.exactly.idempotency.spring.boot.app;

import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Guarded routes (see the test properties): {@code /v1/charges} rejects in-flight duplicates,
 * {@code /v1/transfers} coalesces them, {@code /v1/notes} takes an optional key. Every response
 * carries a fresh sequence number, so a replay is told apart from a second execution by its body.
 */
@RestController
class ChargeController {
    private final Handlers handlers;

    ChargeController(Handlers handlers) {
        this.handlers = handlers;
    }

    @PostMapping({"/v1/charges", "/v1/transfers", "/v1/notes"})
    ResponseEntity<String> create(@RequestBody String body, HttpServletResponse response) throws InterruptedException {
        return handlers.respond(body, response);
    }
}
