package dev.exactly.payments.api;

import dev.exactly.payments.security.ProblemWriter;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /error}, where the container forwards what escaped every handler (a filter's exception, a
 * {@code sendError}, a path it could not decode): the status as a problem document, never Spring Boot's
 * default body. Asked for directly, it is not an endpoint: 404. The answer is written straight to the
 * response: a message converter would decode the original path again (for its download-protection
 * header), and that path may be the very thing that could not be decoded.
 */
@RestController
public class ProblemErrorController implements ErrorController {

    @RequestMapping("/error")
    public void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        ApiResponse answer = status instanceof Integer code && code >= 400
                ? ApiProblems.containerError(code)
                : ApiProblems.notFound("resource");
        ProblemWriter.write(response, answer);
    }
}
