package dev.exactly.examples.webflux;

import dev.exactly.idempotency.spring.Idempotent;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Non-blocking handlers, each route guarded by its annotation. */
@RestController
public class ChargeController {
    private final AtomicLong charges = new AtomicLong();
    private final AtomicLong refunds = new AtomicLong();

    public record ChargeRequest(long amount, String currency) {}

    public record Charge(String id, long amount, String currency, String status) {}

    public record RefundRequest(long amount) {}

    public record Refund(String id, String charge, long amount) {}

    @PostMapping("/v1/charges")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    public Mono<Charge> charge(@RequestBody ChargeRequest request) {
        return Mono.fromSupplier(
                () -> new Charge("ch_" + charges.incrementAndGet(), request.amount(), request.currency(), "succeeded"));
    }

    @PostMapping("/v1/charges/{id}/refunds")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent(inFlight = Idempotent.InFlight.WAIT, maxWait = "10s", retention = "7d")
    public Mono<Refund> refund(@PathVariable String id, @RequestBody RefundRequest request) {
        return Mono.fromSupplier(() -> new Refund("re_" + refunds.incrementAndGet(), id, request.amount()));
    }

    /** How many times the charge handler ran. */
    public long chargesMade() {
        return charges.get();
    }
}
