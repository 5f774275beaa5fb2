package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import io.lettuce.core.RedisURI;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails.Node;

/**
 * The Redis store on Spring Boot's Redis connection ({@link DataRedisConnectionDetails}): the one that
 * {@code spring.data.redis.*} describes, or that {@code @ServiceConnection} (Testcontainers) and Docker
 * Compose support register in its place. Standalone, Sentinel and Cluster; TLS when the details carry an
 * SSL bundle (with the JVM's trust store: a custom bundle's trust material is not applied, use
 * {@code exactly.idempotency.redis.uri} and the JVM's trust store for a private CA). Loaded only when
 * {@code spring-boot-data-redis} is on the class path.
 */
final class DataRedisConnections {
    /** The details type, by name, so that other classes may test for it without loading it. */
    static final String DETAILS_CLASS = "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails";

    private DataRedisConnections() {}

    /** A store on the application's one {@link DataRedisConnectionDetails} bean. */
    static RedisIdempotencyStore create(ListableBeanFactory beans, RedisStoreConfig config) {
        DataRedisConnectionDetails details =
                beans.getBeanProvider(DataRedisConnectionDetails.class).getIfUnique();
        if (details == null) {
            throw new InvalidIdempotencyPropertiesException(List.of(PropertiesReader.P + "store=redis without "
                    + PropertiesReader.P + "redis.uri uses Spring Boot's Redis connection, and there is "
                    + (beans.getBeanNamesForType(DataRedisConnectionDetails.class).length > 1
                            ? "more than one DataRedisConnectionDetails bean: mark one @Primary"
                            : "none: set spring.data.redis.host (and .port, .password, or .url), or "
                                    + PropertiesReader.P + "redis.uri")));
        }
        return create(details, config);
    }

    static RedisIdempotencyStore create(DataRedisConnectionDetails details, RedisStoreConfig config) {
        boolean ssl = details.getSslBundle() != null;
        DataRedisConnectionDetails.Cluster cluster = details.getCluster();
        if (cluster != null) {
            List<RedisURI> seeds = cluster.getNodes().stream()
                    .map(node -> node(node, ssl, details.getUsername(), details.getPassword())
                            .build())
                    .toList();
            return RedisIdempotencyStore.createCluster(seeds, config);
        }
        if (details.getMasterReplica() != null) {
            throw new InvalidIdempotencyPropertiesException(List.of(PropertiesReader.P + "store=redis: Spring Boot's "
                    + "Redis connection is a static master/replica set, which the idempotency store does not use "
                    + "(its writes and reads must reach the primary): set " + PropertiesReader.P + "redis.uri"));
        }
        DataRedisConnectionDetails.Sentinel sentinel = details.getSentinel();
        if (sentinel != null) {
            RedisURI.Builder builder = RedisURI.builder()
                    .withSentinelMasterId(sentinel.getMaster())
                    .withDatabase(sentinel.getDatabase())
                    .withSsl(ssl);
            authenticate(builder, details.getUsername(), details.getPassword());
            for (Node node : sentinel.getNodes()) {
                builder.withSentinel(node(node, ssl, sentinel.getUsername(), sentinel.getPassword())
                        .build());
            }
            return RedisIdempotencyStore.create(builder.build(), config);
        }
        DataRedisConnectionDetails.Standalone standalone = Objects.requireNonNull(
                details.getStandalone(),
                "Spring Data Redis's connection details name no Cluster, no Sentinel and no standalone server");
        RedisURI.Builder builder = node(
                        new Node(standalone.getHost(), standalone.getPort()),
                        ssl,
                        details.getUsername(),
                        details.getPassword())
                .withDatabase(standalone.getDatabase());
        return RedisIdempotencyStore.create(builder.build(), config);
    }

    private static RedisURI.Builder node(Node node, boolean ssl, @Nullable String username, @Nullable String password) {
        RedisURI.Builder builder =
                RedisURI.builder().withHost(node.host()).withPort(node.port()).withSsl(ssl);
        authenticate(builder, username, password);
        return builder;
    }

    private static void authenticate(RedisURI.Builder builder, @Nullable String username, @Nullable String password) {
        if (password == null || password.isEmpty()) {
            return;
        }
        if (username == null || username.isEmpty()) {
            builder.withPassword(password.toCharArray());
        } else {
            builder.withAuthentication(username, password);
        }
    }
}
