package dev.exactly.benchmarks.store;

import dev.exactly.benchmarks.Machine;
import dev.exactly.benchmarks.TextTable;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.SystemProperties;
import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * What a guarded request costs Redis in instructions, against the physical floor's commands, counted by
 * running {@code redis-server} under Valgrind's callgrind: an instruction count does not depend on what
 * else the machine is doing, where a rate or a CPU time on two shared cores swings by a fifth between
 * runs. It counts the server's own work (parsing, the keyspace, scripts, replies), not the kernel's
 * networking, which is the same per round trip on both sides.
 *
 * <p>One client thread runs, in turn and one operation at a time: the floor of a fresh key ({@code SET k v
 * NX PX}, then {@code SET k v XX PX}, as {@code raw-redis-2}), the fenced floor of a fresh key (the same
 * claim, then the least script that writes the answer only while the key holds the claim's value: what
 * any completion that a stale owner cannot overwrite costs on a Redis without a compare-and-set command,
 * before 8.4), the store's fresh key (the engine on
 * {@link RedisIdempotencyStore}: claim, then completion), the floor of a replay ({@code GET}, as
 * {@code raw-redis-1}) and the store's replay of a completed key (after replays enough for the store to read
 * first, as it does while most keys it claims are replays). Between phases the counters are dumped,
 * so each phase is counted alone, and {@code INFO commandstats} tells which commands each phase sent.
 *
 * <p>Options: {@code -Dexactly.bench.operations=5000} per phase; {@code -Dexactly.bench.keep=true} keeps
 * callgrind's dumps (one per phase) for {@code callgrind_annotate}. Needs {@code valgrind} and
 * {@code redis-server} on the PATH ({@code benchmarks/redis-instructions.sh} installs valgrind).
 */
public final class RedisInstructions {
    private static final IdempotencyPolicy POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofMillis(RedisRawBaseline.TTL_MILLIS))
            .build();
    private static final Duration START_UNDER_VALGRIND = Duration.ofSeconds(60);
    /** Replays before the store's replay phase, counted apart: enough for the store to read first. */
    private static final int REPLAY_WARM_UP = 64;

    static final String FLOOR_FRESH = "floor, fresh key";
    static final String FENCED_FLOOR_FRESH = "fenced floor, fresh key";
    static final String STORE_FRESH = "store, fresh key";
    static final String FLOOR_REPLAY = "floor, replay";
    static final String STORE_REPLAY = "store, replay";

    private RedisInstructions() {}

    /** One measured phase: the server's instructions and the commands it ran, per operation. */
    record Phase(String name, long operations, long instructions, Map<String, Long> commands) {
        double perOperation() {
            return (double) instructions / operations;
        }

        String commandsPerOperation() {
            return commands.entrySet().stream()
                    .map(c -> String.format("%s %.2f", c.getKey(), (double) c.getValue() / operations))
                    .collect(Collectors.joining(", "));
        }
    }

    public static void main(String[] args) throws Exception {
        int operations = SystemProperties.integer("exactly.bench.operations", 5_000);
        List<Phase> phases = run(operations, System.out);
        report(phases, System.out);
    }

    /** Runs the four phases of {@code operations} each and returns them in order. */
    static List<Phase> run(int operations, PrintStream progress) throws Exception {
        if (!available()) {
            throw new IllegalStateException("needs redis-server, valgrind and callgrind_control on the PATH");
        }
        Path redisServer = StoreFixture.redisServerBinary();
        if (redisServer == null) {
            throw new IllegalStateException(
                    "needs redis-server on the PATH (or -D" + StoreFixture.REDIS_SERVER_PROPERTY + ")");
        }
        Path out = Files.createTempDirectory("exactly-callgrind");
        int port = TestRedis.freePort();
        RedisProcess server = RedisProcess.start(
                List.of("valgrind", "--tool=callgrind", "--callgrind-out-file=" + out.resolve("redis.out")),
                redisServer,
                port,
                List.of(),
                START_UNDER_VALGRIND);
        RedisURI uri = RedisURI.create("redis://" + TestRedis.host() + ":" + port);
        RedisClient rawClient = RedisClient.create(uri);
        try (StatefulRedisConnection<byte[], byte[]> connection = rawClient.connect(ByteArrayCodec.INSTANCE);
                StatefulRedisConnection<String, String> admin = rawClient.connect();
                RedisIdempotencyStore store = RedisIdempotencyStore.create(
                        uri.toString(),
                        RedisStoreConfig.custom()
                                .keyPrefix("exactly:instructions:")
                                .build())) {
            RedisRawBaseline raw = new RedisRawBaseline(connection.async(), "exactly:instructions:raw:", () -> {});
            GuardedWorkload workload =
                    new GuardedWorkload(IdempotencyEngine.builder(store).build(), POLICY);
            Counter counter = new Counter(server.pid(), out, admin);
            byte[] answer = GuardedWorkload.RESPONSE_JSON.getBytes(StandardCharsets.UTF_8);

            // warm-up (connections, the scripts loaded, the keyspace grown) and the keys the replays read
            for (int i = 0; i < 200; i++) {
                floorFresh(raw, "warm-" + i, answer);
                workload.guarded("warm-" + i);
            }
            workload.prepareReplayKeys("replay-", operations, 1);
            for (int i = 0; i < operations; i++) {
                floorFresh(raw, "replay-" + i, answer);
            }

            List<Phase> phases = new ArrayList<>();
            String compareAndSet = connection.sync().scriptLoad(RedisRawBaseline.COMPARE_AND_SET);
            phases.add(counter.phase(FLOOR_FRESH, operations, i -> floorFresh(raw, "fresh-" + i, answer)));
            phases.add(counter.phase(
                    FENCED_FLOOR_FRESH,
                    operations,
                    i -> fencedFloorFresh(
                            connection.sync(), compareAndSet, "exactly:instructions:fenced:" + i, answer)));
            phases.add(counter.phase(STORE_FRESH, operations, i -> workload.guarded("fresh-" + i)));
            phases.add(counter.phase(FLOOR_REPLAY, operations, i -> {
                if (raw.read("replay-" + i) == null) {
                    throw new IllegalStateException("the floor's replay key " + i + " is missing");
                }
            }));
            // the store reads first once most keys it claims are replays, as after the HTTP benchmark's warm-up
            for (int i = 0; i < REPLAY_WARM_UP; i++) {
                workload.replay(i % operations);
            }
            phases.add(counter.phase(STORE_REPLAY, operations, workload::replay));
            progress.printf(
                    "%d operations per phase, every answer checked, %d guarded executions%n",
                    operations, workload.executions());
            return phases;
        } finally {
            rawClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            server.stop();
            if (SystemProperties.flag("exactly.bench.keep")) {
                progress.println(
                        "callgrind's dumps kept in " + out + " (one per phase, in order, after the warm-up's)");
            } else {
                RedisCluster.deleteTree(out);
            }
            RedisCluster.deleteTree(server.dir());
        }
    }

    /**
     * The least a fenced completion can cost on Redis before 8.4 (no compare-and-set command): a script
     * that writes the answer only if the key still holds the claim's own value.
     */
    private static void fencedFloorFresh(
            RedisCommands<byte[], byte[]> commands, String compareAndSet, String key, byte[] answer) {
        byte[] name = key.getBytes(StandardCharsets.UTF_8);
        byte[] fence = RedisRawBaseline.FENCE;
        if (!"OK".equals(commands.set(name, fence, SetArgs.Builder.nx().px(RedisRawBaseline.TTL_MILLIS)))) {
            throw new IllegalStateException("the fenced floor's key " + key + " was taken before");
        }
        Long written = commands.evalsha(
                compareAndSet, ScriptOutputType.INTEGER, new byte[][] {name}, fence, answer, RedisRawBaseline.TTL);
        if (written == null || written != 1L) {
            throw new IllegalStateException("the fenced floor's write of " + key + " was refused");
        }
    }

    private static void floorFresh(RedisRawBaseline raw, String key, byte[] answer) {
        if (!raw.claim(key) || !raw.finish(key, answer)) {
            throw new IllegalStateException("the floor's key " + key + " was not written twice");
        }
    }

    static void report(List<Phase> phases, PrintStream out) {
        out.println("Redis instructions per operation (redis-server under callgrind), "
                + Machine.sample(InstantSource.system()).describe());
        Map<String, Phase> byName = phases.stream().collect(Collectors.toMap(Phase::name, p -> p));
        TextTable table =
                new TextTable("operation", "instructions", "vs floor", "vs fenced floor", "commands per operation");
        for (Phase phase : phases) {
            String floor = switch (phase.name()) {
                case FENCED_FLOOR_FRESH, STORE_FRESH -> FLOOR_FRESH;
                case STORE_REPLAY -> FLOOR_REPLAY;
                default -> null;
            };
            table.row(
                    phase.name(),
                    String.format("%,.0f", phase.perOperation()),
                    ratio(phase, byName.get(floor)),
                    phase.name().equals(STORE_FRESH) ? ratio(phase, byName.get(FENCED_FLOOR_FRESH)) : "-",
                    phase.commandsPerOperation());
        }
        table.print(out);
    }

    private static String ratio(Phase phase, @Nullable Phase floor) {
        return floor == null ? "-" : String.format("%.2f", phase.perOperation() / floor.perOperation());
    }

    /** Dumps and zeroes callgrind's counters around a phase and reads the commands Redis counted. */
    private record Counter(long pid, Path dir, StatefulRedisConnection<String, String> admin) {
        interface Operation {
            void run(int index) throws Exception;
        }

        Phase phase(String name, int operations, Operation operation) throws Exception {
            dump(); // what came before is counted apart
            admin.sync().configResetstat();
            for (int i = 0; i < operations; i++) {
                operation.run(i);
            }
            Map<String, Long> commands = commands();
            long instructions = dump();
            return new Phase(name, operations, instructions, commands);
        }

        /** The instruction total of a new dump: the counters since the previous one. */
        private long dump() throws IOException, InterruptedException {
            List<Path> before = dumps();
            Process control = new ProcessBuilder("callgrind_control", "--dump", Long.toString(pid))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!control.waitFor(60, TimeUnit.SECONDS) || control.exitValue() != 0) {
                control.destroyForcibly();
                throw new IllegalStateException("callgrind_control --dump " + pid + " failed");
            }
            List<Path> after = dumps();
            after.removeAll(before);
            if (after.size() != 1) {
                throw new IllegalStateException("expected one new callgrind dump, found " + after);
            }
            for (String line : Files.readAllLines(after.get(0))) {
                if (line.startsWith("totals:") || line.startsWith("summary:")) {
                    return Long.parseLong(
                            line.substring(line.indexOf(':') + 1).strip().split("\\s+", -1)[0]);
                }
            }
            throw new IllegalStateException("no instruction total in " + after.get(0));
        }

        private List<Path> dumps() throws IOException {
            try (Stream<Path> files = Files.list(dir)) {
                return files.filter(f -> f.getFileName().toString().matches("redis\\.out.*\\.\\d+"))
                        .collect(Collectors.toCollection(ArrayList::new));
            }
        }

        /** Calls per command since the last reset, {@code INFO} and {@code CONFIG} left out. */
        private Map<String, Long> commands() {
            Map<String, Long> calls = new LinkedHashMap<>();
            for (String line : admin.sync().info("commandstats").split("\r?\n", -1)) {
                if (!line.startsWith("cmdstat_")) {
                    continue;
                }
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                if (command.equals("info") || command.startsWith("config")) {
                    continue;
                }
                long count = Arrays.stream(line.substring(line.indexOf(':') + 1).split(","))
                        .filter(f -> f.startsWith("calls="))
                        .mapToLong(f -> Long.parseLong(f.substring("calls=".length())))
                        .sum();
                calls.put(command, count);
            }
            return calls;
        }
    }

    /** Whether it can run here: {@code redis-server}, {@code valgrind} and {@code callgrind_control} on the PATH. */
    static boolean available() {
        return StoreFixture.redisServerBinary() != null
                && TestRedis.onPath("valgrind") != null
                && TestRedis.onPath("callgrind_control") != null;
    }
}
