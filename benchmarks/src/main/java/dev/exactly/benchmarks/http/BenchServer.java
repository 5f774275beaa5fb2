package dev.exactly.benchmarks.http;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.jspecify.annotations.Nullable;

/**
 * An embedded Tomcat on a free loopback port, requests served on virtual threads, with one context per
 * {@link Variant}: {@code POST /<variant>/v1/charges} (and, for a raw baseline, {@code /v1/replays}),
 * each with its own servlets and, for a guarded variant, the idempotency filter in front of them. An
 * outermost filter counts the requests in progress, so that a phase's executions are counted only once
 * every request of it has finished.
 */
final class BenchServer implements AutoCloseable {
    /** Held so that the levels set on them stay in force. */
    private static final Logger TOMCAT_LOG = Logger.getLogger("org.apache");
    /**
     * At stop, Tomcat warns about threads that pools started while serving a request (Hikari's connection
     * adder, for one); nothing is redeployed here, so those warnings say nothing.
     */
    private static final Logger LEAK_CHECK_LOG = Logger.getLogger("org.apache.catalina.loader.WebappClassLoaderBase");

    /**
     * What one variant serves.
     *
     * @param guard      the idempotency filter, for a guarded variant
     * @param charges    the servlet at {@code /v1/charges}
     * @param replays    the servlet at {@code /v1/replays}, for a raw baseline
     * @param told       the servlet at {@code /v1/told}, for a raw baseline in the mixed mix
     * @param executions the handler's executions
     */
    record Endpoint(
            @Nullable Filter guard,
            HttpServlet charges,
            @Nullable HttpServlet replays,
            @Nullable HttpServlet told,
            Executions executions) {

        /** An endpoint with one servlet for every request. */
        Endpoint(@Nullable Filter guard, HttpServlet charges, Executions executions) {
            this(guard, charges, null, null, executions);
        }
    }

    private final Tomcat tomcat;
    private final Path baseDir;
    private final int port;
    private final Map<Variant, Endpoint> endpoints;
    private final AtomicInteger inProgress;

    private BenchServer(
            Tomcat tomcat, Path baseDir, int port, Map<Variant, Endpoint> endpoints, AtomicInteger inProgress) {
        this.tomcat = tomcat;
        this.baseDir = baseDir;
        this.port = port;
        this.endpoints = endpoints;
        this.inProgress = inProgress;
    }

    /** Starts a server with a context per endpoint. */
    static BenchServer start(Map<Variant, Endpoint> endpoints) {
        TOMCAT_LOG.setLevel(Level.WARNING);
        LEAK_CHECK_LOG.setLevel(Level.SEVERE);
        Path baseDir;
        try {
            baseDir = Files.createTempDirectory("exactly-bench-tomcat");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = new Connector("HTTP/1.1");
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        connector.setProperty("useVirtualThreads", "true");
        connector.setProperty("maxKeepAliveRequests", "-1");
        tomcat.setConnector(connector);
        AtomicInteger inProgress = new AtomicInteger();
        for (Map.Entry<Variant, Endpoint> entry : endpoints.entrySet()) {
            Endpoint endpoint = entry.getValue();
            StandardContext context =
                    (StandardContext) tomcat.addContext(entry.getKey().contextPath(), baseDir.toString());
            // nothing is redeployed: the leak checks at stop would only warn about Lettuce's threads
            context.setClearReferencesThreadLocals(false);
            context.setClearReferencesRmiTargets(false);
            Tomcat.addServlet(context, "charges", endpoint.charges());
            context.addServletMapping("/v1/charges", "charges");
            if (endpoint.told() != null) {
                Tomcat.addServlet(context, "told", endpoint.told());
                context.addServletMapping("/v1/told", "told");
            }
            if (endpoint.replays() != null) {
                Tomcat.addServlet(context, "replays", endpoint.replays());
                context.addServletMapping("/v1/replays", "replays");
            }
            addFilter(context, "in-progress", new InProgressFilter(inProgress));
            if (endpoint.guard() != null) {
                addFilter(context, "idempotency", endpoint.guard());
            }
        }
        try {
            tomcat.start();
        } catch (LifecycleException e) {
            throw new IllegalStateException("Tomcat did not start", e);
        }
        return new BenchServer(tomcat, baseDir, connector.getLocalPort(), Map.copyOf(endpoints), inProgress);
    }

    private static void addFilter(StandardContext context, String name, Filter filter) {
        FilterDef def = new FilterDef();
        def.setFilterName(name);
        def.setFilter(filter);
        context.addFilterDef(def);
        FilterMap map = new FilterMap();
        map.setFilterName(name);
        map.addURLPattern("/*");
        context.addFilterMap(map);
    }

    /** {@code http://127.0.0.1:PORT/<variant>/v1/...}: where requests of {@code mix} go. */
    URI uri(Variant variant, Mix mix) {
        return URI.create("http://127.0.0.1:" + port + variant.contextPath() + variant.path(mix));
    }

    /** The handler executions of {@code variant}. */
    Executions executions(Variant variant) {
        return Objects.requireNonNull(endpoints.get(variant), variant.id()).executions();
    }

    /** Requests being served right now. */
    int inProgress() {
        return inProgress.get();
    }

    @Override
    public void close() throws LifecycleException, IOException {
        tomcat.stop();
        tomcat.destroy();
        try (Stream<Path> files = Files.walk(baseDir)) {
            for (Path path : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    /** Counts requests in progress; outermost in every context. */
    private static final class InProgressFilter implements Filter {
        private final AtomicInteger inProgress;

        InProgressFilter(AtomicInteger inProgress) {
            this.inProgress = inProgress;
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            inProgress.incrementAndGet();
            try {
                chain.doFilter(request, response);
            } finally {
                inProgress.decrementAndGet();
            }
        }
    }
}
