package dev.exactly.benchmarks.http;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Reads Redis's own account of its work from every node behind an endpoint: {@code INFO commandstats}
 * (calls and microseconds spent per command; a script's inner commands are counted too, and their time
 * is also inside the script's) and {@code INFO cpu} (the server process's CPU time, user and system: what
 * a request costs the machine on Redis's side, networking included, and which the load of other processes
 * stretches far less than the time spent inside commands). {@code INFO} itself is left out of the commands.
 */
final class RedisCommandStats implements AutoCloseable {
    private final List<RedisClient> clients = new ArrayList<>();
    private final List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();

    RedisCommandStats(List<RedisURI> nodes) {
        for (RedisURI node : nodes) {
            RedisClient client = RedisClient.create(node);
            clients.add(client);
            connections.add(client.connect());
        }
    }

    /** Calls and microseconds of one command. */
    record Stat(long calls, long micros) {
        Stat minus(Stat earlier) {
            return new Stat(calls - earlier.calls, micros - earlier.micros);
        }
    }

    /** The server processes' CPU time (user and system), summed over the nodes now, in microseconds. */
    long cpuMicros() {
        long total = 0;
        for (StatefulRedisConnection<String, String> connection : connections) {
            for (String line : connection.sync().info("cpu").split("\r?\n", -1)) {
                // used_cpu_sys:1.234567 (the server's main process; the _children lines are forks)
                if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                    total += Math.round(Double.parseDouble(
                                    line.substring(line.indexOf(':') + 1).strip())
                            * 1_000_000);
                }
            }
        }
        return total;
    }

    /** The counters summed over the nodes now. */
    Map<String, Stat> snapshot() {
        Map<String, Stat> total = new HashMap<>();
        for (StatefulRedisConnection<String, String> connection : connections) {
            for (String line : connection.sync().info("commandstats").split("\r?\n", -1)) {
                // cmdstat_set:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0
                if (!line.startsWith("cmdstat_")) {
                    continue;
                }
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                if (command.equals("info")) {
                    continue;
                }
                long calls = 0;
                long micros = 0;
                for (String field : line.substring(line.indexOf(':') + 1).split(",", -1)) {
                    if (field.startsWith("calls=")) {
                        calls = Long.parseLong(field.substring(6));
                    } else if (field.startsWith("usec=")) {
                        micros = Long.parseLong(field.substring(5));
                    }
                }
                total.merge(
                        command, new Stat(calls, micros), (a, b) -> new Stat(a.calls + b.calls, a.micros + b.micros));
            }
        }
        return total;
    }

    /** What happened between two snapshots. */
    static Delta between(Map<String, Stat> before, Map<String, Stat> after, long cpuMicros) {
        Map<String, Stat> delta = new HashMap<>();
        after.forEach((command, stat) -> {
            Stat d = stat.minus(before.getOrDefault(command, new Stat(0, 0)));
            if (d.calls() > 0) {
                delta.put(command, d);
            }
        });
        return new Delta(Map.copyOf(delta), cpuMicros);
    }

    /** The server's work during a phase: by command, and its CPU time in microseconds. */
    record Delta(Map<String, Stat> commands, long cpuMicros) {

        /** Commands per request. */
        double callsPer(long requests) {
            return requests == 0
                    ? 0
                    : commands.values().stream().mapToLong(Stat::calls).sum() / (double) requests;
        }

        /** Server CPU microseconds per request. */
        double cpuMicrosPer(long requests) {
            return requests == 0 ? 0 : cpuMicros / (double) requests;
        }

        /** Server microseconds (inside commands, a script's inner commands twice) per request. */
        double microsPer(long requests) {
            return requests == 0
                    ? 0
                    : commands.values().stream().mapToLong(Stat::micros).sum() / (double) requests;
        }

        /** e.g. {@code evalsha 1.00/req 9.8 µs/call, set 1.00/req 1.1 µs/call}, busiest first. */
        String describe(long requests) {
            return commands.entrySet().stream()
                    .sorted(Comparator.comparingLong(
                                    (Map.Entry<String, Stat> e) -> e.getValue().micros())
                            .reversed())
                    .map(e -> String.format(
                            "%s %.2f/req %.1f µs/call",
                            e.getKey(),
                            e.getValue().calls() / (double) Math.max(1, requests),
                            e.getValue().micros() / (double) e.getValue().calls()))
                    .collect(Collectors.joining(", "));
        }
    }

    @Override
    public void close() {
        connections.forEach(StatefulRedisConnection::close);
        clients.forEach(client -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
    }
}
