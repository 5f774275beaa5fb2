package dev.exactly.idempotency.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The application under the filter: one servlet whose behaviour each test sets, counting how often it
 * ran; an "authentication" filter that turns {@code X-Test-User} into the principal; and a filter that
 * counts arrivals before the idempotency filter.
 */
final class TestApp extends HttpServlet {

    @FunctionalInterface
    interface Handler {
        void handle(HttpServletRequest request, HttpServletResponse response) throws Exception;
    }

    final AtomicInteger executions = new AtomicInteger();
    private volatile Handler handler = (request, response) -> response.setStatus(204);

    void handler(Handler handler) {
        this.handler = handler;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        executions.incrementAndGet();
        try {
            handler.handle(request, response);
        } catch (IOException | ServletException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new ServletException(e);
        }
    }

    /** Stands in for a security filter: {@code X-Test-User: alice} authenticates as alice. */
    static final class FakeAuthentication implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            String user = request.getHeader("X-Test-User");
            if (user == null) {
                chain.doFilter(req, res);
                return;
            }
            Principal principal = () -> user;
            chain.doFilter(
                    new HttpServletRequestWrapper(request) {
                        @Override
                        public Principal getUserPrincipal() {
                            return principal;
                        }
                    },
                    res);
        }
    }

    /** Counts requests as they arrive, before the idempotency filter sees them. */
    static final class Arrivals implements Filter {
        volatile Runnable onArrival = () -> {};

        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            onArrival.run();
            chain.doFilter(req, res);
        }
    }
}
