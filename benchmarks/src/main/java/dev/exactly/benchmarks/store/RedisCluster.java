package dev.exactly.benchmarks.store;

import static org.awaitility.Awaitility.await;

import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * A Redis Cluster of master-only nodes on loopback ports, each a {@code redis-server} child process in
 * its own directory, joined with {@code CLUSTER ADDSLOTS} and {@code CLUSTER MEET}, and stopped by its
 * process (also from a shutdown hook, should the benchmark JVM be ended early).
 */
public final class RedisCluster implements AutoCloseable {
    private static final int SLOTS = 16384;
    /** Redis listens for the cluster bus on the client port + 10000. */
    private static final int BUS_PORT_OFFSET = 10000;

    private final List<RedisProcess> nodes;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    private RedisCluster(List<RedisProcess> nodes) {
        this.nodes = List.copyOf(nodes);
        this.shutdownHook = new Thread(this::stopNodes, "redis-cluster-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Whether a cluster can be started here ({@code redis-server} on the PATH). */
    public static boolean available() {
        return StoreFixture.redisServerBinary() != null;
    }

    /** Starts {@code masters} nodes, assigns the slots evenly and waits (bounded) for {@code cluster_state:ok}. */
    public static RedisCluster start(int masters) {
        Path binary = StoreFixture.redisServerBinary();
        if (binary == null) {
            throw new IllegalStateException("redis-server is not on the PATH: a local Redis Cluster cannot be started");
        }
        List<RedisProcess> started = new ArrayList<>();
        try {
            for (int i = 0; i < masters; i++) {
                int port = portWithFreeBusPort();
                started.add(RedisProcess.start(
                        binary,
                        port,
                        List.of(
                                "--cluster-enabled",
                                "yes",
                                "--cluster-config-file",
                                "nodes-" + port + ".conf",
                                "--cluster-node-timeout",
                                "2000",
                                "--cluster-announce-ip",
                                TestRedis.host())));
            }
        } catch (RuntimeException | Error e) {
            started.forEach(RedisProcess::stop);
            throw e;
        }
        RedisCluster cluster = new RedisCluster(started);
        try {
            cluster.join();
            return cluster;
        } catch (RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    private void join() {
        for (int i = 0; i < nodes.size(); i++) {
            int from = i * SLOTS / nodes.size();
            int to = (i + 1) * SLOTS / nodes.size();
            int[] slots = IntStream.range(from, to).toArray();
            onNode(nodes.get(i).port(), node -> node.clusterAddSlots(slots));
        }
        onNode(
                nodes.getFirst().port(),
                first -> nodes.stream().skip(1).forEach(node -> first.clusterMeet(TestRedis.host(), node.port())));
        await("cluster_state:ok on every node")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(this::healthy);
    }

    private boolean healthy() {
        for (RedisProcess node : nodes) {
            String[] info = new String[1];
            onNode(node.port(), commands -> info[0] = commands.clusterInfo());
            if (!info[0].contains("cluster_state:ok")
                    || !info[0].contains("cluster_known_nodes:" + nodes.size())
                    || !info[0].contains("cluster_slots_ok:" + SLOTS)) {
                return false;
            }
        }
        return true;
    }

    private static void onNode(int port, Consumer<RedisCommands<String, String>> action) {
        RedisClient client = RedisClient.create(RedisURI.create(TestRedis.host(), port));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            action.accept(connection.sync());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...}. */
    public String uri() {
        return "redis-cluster://"
                + nodes.stream()
                        .map(node -> TestRedis.host() + ":" + node.port())
                        .collect(Collectors.joining(","));
    }

    /** The seed URIs of the nodes. */
    public List<RedisURI> seeds() {
        return nodes.stream()
                .map(node -> RedisURI.create(TestRedis.host(), node.port()))
                .toList();
    }

    /** The process ids of the nodes. */
    public List<Long> pids() {
        return nodes.stream().map(RedisProcess::pid).toList();
    }

    /** Stops every node by its process and removes its directory. */
    @Override
    public void close() {
        stopNodes();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook is running or has run: the nodes are stopped either way
        }
    }

    private void stopNodes() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (RedisProcess node : nodes) {
            node.stop();
            deleteTree(node.dir());
        }
    }

    private static int portWithFreeBusPort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = TestRedis.freePort();
            if (port + BUS_PORT_OFFSET <= 65535 && bindable(port + BUS_PORT_OFFSET)) {
                return port;
            }
        }
        throw new IllegalStateException("found no free port pair (port, port + 10000) for a Redis Cluster node");
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort() == port;
        } catch (IOException e) {
            return false;
        }
    }

    /** Removes {@code dir} and everything in it. */
    static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not remove " + dir, e);
        }
    }
}
