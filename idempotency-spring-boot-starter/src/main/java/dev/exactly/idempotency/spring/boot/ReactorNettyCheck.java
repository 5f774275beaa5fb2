package dev.exactly.idempotency.spring.boot;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * Whether the application serves on a Reactor Netty that leaves keep-alive requests unanswered. Reactor Netty
 * 1.3.0 to 1.3.7 (1.3.6 is the version Spring Boot 4.0.7 manages) can leave a request that arrives on a
 * keep-alive connection while the one before it is still being ended without any answer; the guard, which reads
 * the body and runs on a worker before it answers, makes that window wide enough that about one in a hundred
 * guarded requests following another on their connection waited for the client's timeout. 1.3.8 does not.
 */
final class ReactorNettyCheck {
    static final String SERVER_CLASS = "reactor.netty.http.server.HttpServer";
    /** Spring Boot's factory of a Reactor Netty server: a bean of it means the application serves on Reactor Netty. */
    static final String BOOT_FACTORY_CLASS = "org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory";

    private ReactorNettyCheck() {}

    /**
     * Whether the application serves HTTP on Reactor Netty: it has a bean of Spring Boot's Netty server factory
     * (a reactive application on Tomcat or Jetty may have Reactor Netty on its class path for its WebClient only).
     */
    static boolean servesOnNetty(ListableBeanFactory beans, ClassLoader loader) {
        try {
            Class<?> factory = Class.forName(BOOT_FACTORY_CLASS, false, loader);
            return beans.getBeanNamesForType(factory, true, false).length > 0;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The version of the Reactor Netty on the class path, or null when there is none or its jar does not say. */
    static @Nullable String version(ClassLoader loader) {
        try {
            Package p = Class.forName(SERVER_CLASS, false, loader).getPackage();
            return p == null ? null : p.getImplementationVersion();
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    /** What to log about that version, or null when it answers every request (or is not known). */
    static @Nullable String warning(@Nullable String version) {
        if (version == null) {
            return null;
        }
        String[] parts = version.split("[.-]", 4);
        if (parts.length < 3 || !parts[0].equals("1") || !parts[1].equals("3")) {
            return null;
        }
        int patch;
        try {
            patch = Integer.parseInt(parts[2]);
        } catch (NumberFormatException e) {
            return null;
        }
        if (patch >= 8) {
            return null;
        }
        return "Reactor Netty " + version + " can leave a request on a keep-alive connection without an answer "
                + "(the client waits for its own timeout; a guarded request, which reads its body before it is "
                + "answered, more often than others): use Reactor Netty 1.3.8 or later, with Netty 4.2.18 or later "
                + "(in a Spring Boot build: the property netty.version, and reactor-netty-core and reactor-netty-http "
                + "managed at 1.3.8)";
    }
}
