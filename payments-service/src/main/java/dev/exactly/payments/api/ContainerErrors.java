package dev.exactly.payments.api;

import dev.exactly.payments.security.ProblemWriter;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.Container;
import org.apache.catalina.Context;
import org.apache.catalina.Lifecycle;
import org.apache.catalina.Valve;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;
import org.apache.coyote.Adapter;
import org.apache.coyote.ContinueResponseTiming;
import org.apache.coyote.ProtocolHandler;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.apache.tomcat.util.net.SocketEvent;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Errors raised before the application sees the request:
 * <ul>
 *   <li>by Tomcat itself (a malformed request line, headers too large, control characters, an encoded
 *       {@code /} or a bad percent-encoding in the path): answered as problem documents by
 *       {@link ProblemErrorReportValve}, which replaces Tomcat's HTML error report (and with it the
 *       server's name and version) on the host;</li>
 *   <li>by Tomcat for the server-wide {@code OPTIONS *}, which it answers without any valve: a broken
 *       {@code OPTIONS *} (bad header, unknown transfer coding) and any other method on {@code *} get a
 *       400 {@code malformed-request} document from {@link AsteriskRequests} instead of an empty 400 or
 *       501; a sound {@code OPTIONS *} keeps Tomcat's 200 with {@code Allow};</li>
 *   <li>by Spring's own parsing of the path, which decodes what Tomcat leaves alone (the values of
 *       {@code ;} path parameters): {@link #requestPathGuard()} parses the path first, and a path that
 *       cannot be parsed is a 400 {@code malformed-request} before any other filter runs.</li>
 * </ul>
 * A request that asks {@code Expect: 100-continue} is told to continue only when a handler reads its body
 * (Tomcat's {@code continueResponseTiming="onRead"}, {@code ON_REQUEST_BODY_READ}), not as soon as its
 * headers are parsed: a request refused on its headers (no key, a body over the limit, an unsupported media
 * type) gets its answer without having been invited to send a body nobody reads.
 */
@Configuration(proxyBeanMethods = false)
public class ContainerErrors {

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> problemErrorReports() {
        return factory -> {
            factory.addConnectorCustomizers(connector -> connector.addLifecycleListener(event -> {
                if (Lifecycle.AFTER_INIT_EVENT.equals(event.getType())) {
                    ProtocolHandler handler = connector.getProtocolHandler();
                    handler.setAdapter(new AsteriskRequests(handler.getAdapter()));
                }
            }));
            factory.addConnectorCustomizers(connector -> {
                if (connector.getProtocolHandler() instanceof AbstractHttp11Protocol<?> http11) {
                    http11.setContinueResponseTiming(ContinueResponseTiming.ON_REQUEST_BODY_READ.toString());
                }
            });
            factory.addContextCustomizers(context -> {
                if (context.getParent() instanceof StandardHost host) {
                    host.setErrorReportValveClass(ProblemErrorReportValve.class.getName());
                    host.getPipeline().addValve(new ProblemErrorReportValve());
                    // other customizers may have added an HTML error report valve: remove it before the host starts
                    context.addLifecycleListener(event -> {
                        if (Lifecycle.BEFORE_START_EVENT.equals(event.getType())) {
                            onlyProblemReports(context);
                        }
                    });
                }
            });
        };
    }

    /** First of all filters, on requests and on error dispatches. */
    @Bean
    FilterRegistrationBean<OncePerRequestFilter> requestPathGuard() {
        FilterRegistrationBean<OncePerRequestFilter> registration =
                new FilterRegistrationBean<>(new OncePerRequestFilter() {
                    @Override
                    protected void doFilterInternal(
                            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                            throws ServletException, IOException {
                        try {
                            ServletRequestPathUtils.parseAndCache(request);
                        } catch (IllegalArgumentException undecodable) {
                            ProblemWriter.write(response, ApiProblems.containerError(400));
                            return;
                        }
                        chain.doFilter(request, response);
                    }

                    @Override
                    protected boolean shouldNotFilterErrorDispatch() {
                        return false;
                    }
                });
        registration.setName("requestPathGuard");
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ERROR);
        return registration;
    }

    private static void onlyProblemReports(Context context) {
        Container host = context.getParent();
        for (Valve valve : host.getPipeline().getValves()) {
            if (valve instanceof ErrorReportValve && !(valve instanceof ProblemErrorReportValve)) {
                host.getPipeline().removeValve(valve);
            }
        }
    }

    /**
     * Requests for {@code *}: Tomcat answers {@code OPTIONS *} in its adapter, before any valve, with an
     * empty body even when the request was broken (status 400 or 501 already set by the parser). Those,
     * and any other method on {@code *}, get a problem document here; everything else goes on to Tomcat.
     */
    static final class AsteriskRequests implements Adapter {
        private final Adapter tomcat;

        AsteriskRequests(Adapter tomcat) {
            this.tomcat = tomcat;
        }

        @Override
        public void service(org.apache.coyote.Request request, org.apache.coyote.Response response) throws Exception {
            boolean asterisk = request.requestURI().equals("*");
            if (!asterisk || (response.getStatus() < 400 && request.getMethod().equalsIgnoreCase("OPTIONS"))) {
                tomcat.service(request, response);
                return;
            }
            ApiResponse answer = ApiProblems.containerError(400);
            byte[] body = answer.body();
            response.setStatus(answer.status());
            response.setContentType(answer.contentType());
            response.setHeader("Cache-Control", "no-store");
            response.setContentLength(body.length);
            response.doWrite(ByteBuffer.wrap(body));
            response.action(ActionCode.CLOSE, null);
        }

        @Override
        public boolean prepare(org.apache.coyote.Request request, org.apache.coyote.Response response)
                throws Exception {
            return tomcat.prepare(request, response);
        }

        @Override
        public boolean asyncDispatch(
                org.apache.coyote.Request request, org.apache.coyote.Response response, SocketEvent status)
                throws Exception {
            return tomcat.asyncDispatch(request, response, status);
        }

        @Override
        public void log(org.apache.coyote.Request request, org.apache.coyote.Response response, long time) {
            tomcat.log(request, response, time);
        }

        @Override
        public void checkRecycled(org.apache.coyote.Request request, org.apache.coyote.Response response) {
            tomcat.checkRecycled(request, response);
        }

        @Override
        public String getDomain() {
            return tomcat.getDomain();
        }
    }

    /** Tomcat's error report, as {@code application/problem+json}, without server information. */
    public static final class ProblemErrorReportValve extends ErrorReportValve {
        public ProblemErrorReportValve() {
            setShowReport(false);
            setShowServerInfo(false);
        }

        @Override
        protected void report(Request request, Response response, Throwable throwable) {
            int status = response.getStatus();
            if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
                return;
            }
            AtomicBoolean ioAllowed = new AtomicBoolean(true);
            response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
            if (!ioAllowed.get()) {
                return;
            }
            ApiResponse answer = ApiProblems.containerError(status);
            try {
                response.setStatus(answer.status());
                response.setHeader("Cache-Control", "no-store");
                byte[] body = answer.body();
                ServletOutputStream out;
                try {
                    out = response.getOutputStream();
                } catch (IllegalStateException writerTaken) {
                    out = null;
                }
                if (out != null) {
                    // the document's bytes as the application sends its own: no charset parameter
                    response.setContentType(answer.contentType());
                    response.setContentLength(body.length);
                    out.write(body);
                    response.finishResponse();
                    return;
                }
                // something already took the writer: its charset is part of the type from here on
                response.setContentType(answer.contentType());
                response.setCharacterEncoding(StandardCharsets.UTF_8);
                Writer writer = response.getReporter();
                if (writer != null) {
                    writer.write(new String(body, StandardCharsets.UTF_8));
                    response.finishResponse();
                }
            } catch (IOException | IllegalStateException e) {
                // the connection is gone or the response was taken: nothing more can be said
            }
        }
    }
}
