package dev.exactly.benchmarks.http;

import jakarta.servlet.Filter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/**
 * An embedded Tomcat on a free loopback port, requests served on virtual threads, with one context per
 * {@link Variant}: {@code POST /<variant>/v1/charges}, each with its own {@link ChargeServlet} and, for a
 * guarded variant, the idempotency filter in front of it.
 */
final class BenchServer implements AutoCloseable {
    /** Held so that the levels set on them stay in force. */
    private static final Logger TOMCAT_LOG = Logger.getLogger("org.apache");
    /**
     * At stop, Tomcat warns about threads that pools started while serving a request (Hikari's connection
     * adder, for one); nothing is redeployed here, so those warnings say nothing.
     */
    private static final Logger LEAK_CHECK_LOG = Logger.getLogger("org.apache.catalina.loader.WebappClassLoaderBase");

    private final Tomcat tomcat;
    private final Path baseDir;
    private final int port;
    private final Map<Variant, ChargeServlet> servlets;

    private BenchServer(Tomcat tomcat, Path baseDir, int port, Map<Variant, ChargeServlet> servlets) {
        this.tomcat = tomcat;
        this.baseDir = baseDir;
        this.port = port;
        this.servlets = servlets;
    }

    /** Starts a server with a context per variant; a variant with a filter is guarded by it. */
    static BenchServer start(Map<Variant, Filter> filters, Iterable<Variant> variants) {
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
        Map<Variant, ChargeServlet> servlets = new EnumMap<>(Variant.class);
        for (Variant variant : variants) {
            StandardContext context = (StandardContext) tomcat.addContext(variant.contextPath(), baseDir.toString());
            // nothing is redeployed: the leak checks at stop would only warn about Lettuce's threads
            context.setClearReferencesThreadLocals(false);
            context.setClearReferencesRmiTargets(false);
            ChargeServlet servlet = new ChargeServlet();
            Tomcat.addServlet(context, "charges", servlet);
            context.addServletMappingDecoded("/v1/charges", "charges", false);
            Filter filter = filters.get(variant);
            if (filter != null) {
                FilterDef def = new FilterDef();
                def.setFilterName("idempotency");
                def.setFilter(filter);
                context.addFilterDef(def);
                FilterMap map = new FilterMap();
                map.setFilterName("idempotency");
                map.addURLPattern("/*");
                context.addFilterMap(map);
            }
            servlets.put(variant, servlet);
        }
        try {
            tomcat.start();
        } catch (LifecycleException e) {
            throw new IllegalStateException("Tomcat did not start", e);
        }
        return new BenchServer(tomcat, baseDir, connector.getLocalPort(), servlets);
    }

    /** {@code http://127.0.0.1:PORT/<variant>/v1/charges}. */
    URI charges(Variant variant) {
        return URI.create("http://127.0.0.1:" + port + variant.contextPath() + "/v1/charges");
    }

    /** How often the handler of {@code variant} ran. */
    long executions(Variant variant) {
        return Objects.requireNonNull(servlets.get(variant), variant.id()).executions();
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
}
