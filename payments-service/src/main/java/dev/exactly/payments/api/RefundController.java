package dev.exactly.payments.api;

import dev.exactly.payments.refund.RefundService;
import dev.exactly.payments.security.Caller;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /v1/refunds}: idempotent, never more than the charge in total. */
@RestController
public class RefundController {
    private final RefundService refunds;

    public RefundController(RefundService refunds) {
        this.refunds = refunds;
    }

    @PostMapping("/v1/refunds")
    public void create(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String tenant = Caller.of(request).requireTenant();
        Http.send(
                Answers.of(refunds.create(tenant, Http.key(request), Http.jsonBody(request), request.getContentType())),
                request,
                response);
    }
}
