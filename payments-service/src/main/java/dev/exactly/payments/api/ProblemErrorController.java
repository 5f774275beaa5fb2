package dev.exactly.payments.api;

import dev.exactly.payments.ApiProblems;
import dev.exactly.payments.ApiResponse;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /error}, where the container forwards what escaped every handler (a filter's exception, a
 * {@code sendError}): the status as a problem document, never Spring Boot's default body. Asked for
 * directly, it is not an endpoint: 404.
 */
@RestController
public class ProblemErrorController implements ErrorController {

    @RequestMapping("/error")
    public ResponseEntity<byte[]> error(HttpServletRequest request) {
        Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        ApiResponse answer = status instanceof Integer code && code >= 400
                ? ApiProblems.containerError(code)
                : ApiProblems.notFound("resource");
        return Http.entity(answer, request);
    }
}
