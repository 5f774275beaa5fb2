package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.Lease;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** The HTTP contract on the servlet filter: an embedded Tomcat, each store. */
@ParameterizedClass(name = "{0}")
@MethodSource("dev.exactly.idempotency.servlet.StoreFixture#all")
class ServletHttpContractTest extends HttpContract {

    @Override
    protected Adapter adapter() {
        return ServletHttpContractTest::start;
    }

    static Server start(IdempotencyEngine engine, Settings settings, Handler handler) throws Exception {
        IdempotencyFilter filter = IdempotencyFilter.builder(engine)
                .routes(settings.routes())
                .tenantResolver(TenantResolver.apiKeys(settings.apiKeys()).orElse(TenantResolver.principal()))
                .maxRequestBodyBytes(settings.maxRequestBodyBytes())
                .maxStoredResponseBytes(settings.maxStoredResponseBytes())
                .replayHeaders(settings.replayHeaders().toArray(String[]::new))
                .credentialHeaders(settings.credentialHeaders().toArray(String[]::new))
                .storeUnavailableRetryAfter(settings.storeUnavailableRetryAfter())
                .whenStoreUnavailable(settings.whenStoreUnavailable())
                .build();
        Filter arrivals = (ServletRequest request, ServletResponse response, FilterChain chain) -> {
            settings.arrivals().run();
            chain.doFilter(request, response);
        };
        TestServer server =
                TestServer.start(new Application(handler), arrivals, new TestApp.FakeAuthentication(), filter);
        return new Server() {
            @Override
            public URI uri(String pathAndQuery) {
                return server.uri(pathAndQuery);
            }

            @Override
            public void close() throws Exception {
                server.close();
            }
        };
    }

    /** The application: the handler's reply, written through the Servlet API. */
    private static final class Application extends HttpServlet {
        private final Handler handler;

        Application(Handler handler) {
            this.handler = handler;
        }

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (String name : Collections.list(request.getHeaderNames())) {
                headers.put(name.toLowerCase(Locale.ROOT), Collections.list(request.getHeaders(name)));
            }
            byte[] body = request.getInputStream().readAllBytes();
            Reply reply;
            try {
                reply = handler.handle(new Received(
                        request.getMethod(),
                        request.getRequestURI(),
                        headers,
                        body,
                        (Lease) request.getAttribute(IdempotencyFilter.LEASE),
                        request.getAttribute(IdempotencyFilter.UNGUARDED) != null));
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            if (reply.doNotRecord()) {
                request.setAttribute(IdempotencyFilter.DO_NOT_RECORD, true);
            }
            response.setStatus(reply.status());
            for (Map.Entry<String, String> header : reply.headers()) {
                response.addHeader(header.getKey(), header.getValue());
            }
            if (reply.body().length > 0) {
                response.setContentLength(reply.body().length);
                response.getOutputStream().write(reply.body());
            }
        }
    }
}
