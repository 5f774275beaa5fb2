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
    private final AllowedMethods allowed;

    public ProblemErrorController(AllowedMethods allowed) {
        this.allowed = allowed;
    }

    @RequestMapping("/error")
    public void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        ApiResponse answer = status instanceof Integer code && code >= 400
                ? ApiProblems.containerError(code)
                : ApiProblems.notFound("resource");
        if (Integer.valueOf(405).equals(status)
                && request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI) instanceof String uri) {
            allow(request, response, uri);
        }
        ProblemWriter.write(response, answer);
    }

    /**
     * A 405 of the container's own (Tomcat refuses {@code TRACE} before any filter) gets the {@code Allow} of the
     * path's handlers ({@link AllowedMethods}), not Tomcat's list of every method the dispatcher servlet
     * implements. A path that cannot be matched keeps Tomcat's.
     */
    private void allow(HttpServletRequest request, HttpServletResponse response, String uri) {
        String methods;
        try {
            methods = allowed.allow(request, uri);
        } catch (RuntimeException unmatchable) {
            return;
        }
        if (!methods.isEmpty()) {
            response.setHeader("Allow", methods);
        }
    }
}
