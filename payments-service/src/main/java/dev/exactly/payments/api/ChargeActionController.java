package dev.exactly.payments.api;

import dev.exactly.payments.charge.ChargeActions;
import dev.exactly.payments.security.Caller;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /v1/charges/{id}/capture} and {@code POST /v1/charges/{id}/void}: resolving an authorization
 * ({@code "capture": false}), each idempotent with its own key, behind both tiers.
 */
@RestController
public class ChargeActionController {
    private final ChargeActions actions;

    public ChargeActionController(ChargeActions actions) {
        this.actions = actions;
    }

    @PostMapping("/v1/charges/{id}/capture")
    public void capture(@PathVariable String id, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        String tenant = Caller.of(request).requireTenant();
        Http.send(
                Answers.of(actions.capture(
                        tenant, id, Http.key(request), Http.jsonBody(request), request.getContentType())),
                request,
                response);
    }

    @PostMapping("/v1/charges/{id}/void")
    public void voidCharge(@PathVariable String id, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        String tenant = Caller.of(request).requireTenant();
        Http.send(
                Answers.of(actions.voidCharge(
                        tenant, id, Http.key(request), Http.jsonBody(request), request.getContentType())),
                request,
                response);
    }
}
