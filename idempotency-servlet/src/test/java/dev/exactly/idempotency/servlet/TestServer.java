package dev.exactly.idempotency.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.Servlet;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/** An embedded Tomcat 11 on a free loopback port, requests served on virtual threads. */
final class TestServer implements AutoCloseable, Call.Endpoint {
    private final Tomcat tomcat;
    private final Path baseDir;
    private final int port;

    private TestServer(Tomcat tomcat, Path baseDir, int port) {
        this.tomcat = tomcat;
        this.baseDir = baseDir;
        this.port = port;
    }

    /** Starts a server running {@code filters} (in order) in front of {@code servlet}, mapped to "/". */
    static TestServer start(Servlet servlet, Filter... filters) throws IOException, LifecycleException {
        Path baseDir = Files.createTempDirectory("exactly-tomcat");
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = new Connector("HTTP/1.1");
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        connector.setProperty("useVirtualThreads", "true");
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", baseDir.toString());
        Tomcat.addServlet(context, "app", servlet);
        context.addServletMapping("/", "app");
        for (int i = 0; i < filters.length; i++) {
            FilterDef def = new FilterDef();
            def.setFilterName("filter-" + i);
            def.setFilter(filters[i]);
            context.addFilterDef(def);
            FilterMap map = new FilterMap();
            map.setFilterName("filter-" + i);
            map.addURLPattern("/*");
            context.addFilterMap(map);
        }
        tomcat.start();
        return new TestServer(tomcat, baseDir, connector.getLocalPort());
    }

    @Override
    public URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + port + pathAndQuery);
    }

    @Override
    public void close() throws Exception {
        tomcat.stop();
        tomcat.destroy();
        try (Stream<Path> files = Files.walk(baseDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
