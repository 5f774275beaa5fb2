package dev.exactly.payments.api;

import dev.exactly.payments.ApiProblems;
import dev.exactly.payments.ApiResponse;
import java.io.IOException;
import java.io.Writer;
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
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Errors Tomcat raises itself, before the application sees the request (a malformed request line,
 * headers too large, control characters, an encoded {@code /} or a bad percent-encoding in the path):
 * answered as problem documents by {@link ProblemErrorReportValve}, which replaces Tomcat's HTML error
 * report (and with it the server's name and version) on the host.
 */
@Configuration(proxyBeanMethods = false)
public class ContainerErrors {

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> problemErrorReports() {
        return factory -> factory.addContextCustomizers(context -> {
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
    }

    private static void onlyProblemReports(Context context) {
        Container host = context.getParent();
        for (Valve valve : host.getPipeline().getValves()) {
            if (valve instanceof ErrorReportValve && !(valve instanceof ProblemErrorReportValve)) {
                host.getPipeline().removeValve(valve);
            }
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
                response.setContentType(answer.contentType());
                response.setCharacterEncoding(StandardCharsets.UTF_8.name());
                response.setHeader("Cache-Control", "no-store");
                Writer writer = response.getReporter();
                if (writer != null) {
                    writer.write(new String(answer.body(), StandardCharsets.UTF_8));
                    response.finishResponse();
                }
            } catch (IOException | IllegalStateException e) {
                // the connection is gone or the response was taken: nothing more can be said
            }
        }
    }
}
