package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The import graph of the service's main code, read from its compiled classes (every class a class file
 * names: imports, fully qualified names, signatures, annotations), so that the structure the README
 * describes stays true: no two packages of the service depend on each other, directly or through others.
 * The check is shown to bite on a small graph with a cycle.
 */
class PackageStructureTest {
    private static final String ROOT = "dev/exactly/payments";
    /** A class of the service named anywhere in a class file's constant pool (names, descriptors, signatures). */
    private static final Pattern SERVICE_CLASS = Pattern.compile(ROOT + "((?:/[a-z][a-z0-9_]*)*)/[A-Z][A-Za-z0-9_$]*");
    private static Map<String, Set<String>> graph;

    @BeforeAll
    static void readClasses() throws IOException, URISyntaxException {
        Path classes = Path.of(PaymentsApplication.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(classes.resolve(ROOT)).as("the compiled main classes").isDirectory();
        graph = new TreeMap<>();
        try (Stream<Path> files = Files.walk(classes.resolve(ROOT))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String pkg = packageOf(classes.relativize(file).toString().replace('\\', '/'));
                Set<String> uses = graph.computeIfAbsent(pkg, p -> new TreeSet<>());
                for (String constant : utf8Constants(file)) {
                    Matcher m = SERVICE_CLASS.matcher(constant);
                    while (m.find()) {
                        String used = m.group(1).isEmpty() ? "(root)" : m.group(1).substring(1);
                        if (!used.equals(pkg)) {
                            uses.add(used);
                        }
                    }
                }
            }
        }
    }

    @Test
    void theServiceHasItsPackages() {
        assertThat(graph.keySet()).contains("(root)", "api", "charge", "config", "db", "json", "keys", "ledger",
                "refund", "security", "web");
        assertThat(graph.get("api")).as("the web layer calls the business packages").contains("charge", "refund");
    }

    @Test
    void noPackageCycles() {
        assertThat(cycles(graph)).as("package cycles in %s", graph).isEmpty();
    }

    @Test
    void theCheckFindsACycle() {
        Map<String, Set<String>> cyclic = Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
        assertThat(cycles(cyclic)).containsExactly(List.of("a", "b", "c"));
        assertThat(cycles(Map.of("a", Set.of("b"), "b", Set.of()))).isEmpty();
    }

    /** The strongly connected components of more than one package (Tarjan), each sorted. */
    static List<List<String>> cycles(Map<String, Set<String>> edges) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<List<String>> found = new ArrayList<>();
        int[] counter = {0};
        for (String node : new TreeSet<>(edges.keySet())) {
            if (!index.containsKey(node)) {
                connect(node, edges, index, low, stack, onStack, found, counter);
            }
        }
        return found;
    }

    private static void connect(String node, Map<String, Set<String>> edges, Map<String, Integer> index,
            Map<String, Integer> low, Deque<String> stack, Set<String> onStack, List<List<String>> found, int[] counter) {
        index.put(node, counter[0]);
        low.put(node, counter[0]);
        counter[0]++;
        stack.push(node);
        onStack.add(node);
        for (String next : edges.getOrDefault(node, Set.of())) {
            if (!index.containsKey(next)) {
                connect(next, edges, index, low, stack, onStack, found, counter);
                low.put(node, Math.min(low.get(node), low.get(next)));
            } else if (onStack.contains(next)) {
                low.put(node, Math.min(low.get(node), index.get(next)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            List<String> component = new ArrayList<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                component.add(member);
            } while (!member.equals(node));
            if (component.size() > 1) {
                component.sort(null);
                found.add(component);
            }
        }
    }

    private static String packageOf(String classFile) {
        String dir = classFile.substring(0, classFile.lastIndexOf('/'));
        return dir.equals(ROOT) ? "(root)" : dir.substring(ROOT.length() + 1);
    }

    /** The UTF-8 entries of a class file's constant pool (JVMS §4.4). */
    static List<String> utf8Constants(Path classFile) {
        try (InputStream raw = Files.newInputStream(classFile); DataInputStream in = new DataInputStream(raw)) {
            if (in.readInt() != 0xCAFEBABE) {
                throw new IllegalStateException(classFile + " is not a class file");
            }
            in.readUnsignedShort();
            in.readUnsignedShort();
            int count = in.readUnsignedShort();
            List<String> strings = new ArrayList<>();
            for (int i = 1; i < count; i++) {
                int tag = in.readUnsignedByte();
                switch (tag) {
                    case 1 -> strings.add(in.readUTF());
                    case 7, 8, 16, 19, 20 -> in.skipNBytes(2);
                    case 15 -> in.skipNBytes(3);
                    case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipNBytes(4);
                    case 5, 6 -> {
                        in.skipNBytes(8);
                        i++;
                    }
                    default -> throw new IllegalStateException("constant pool tag " + tag + " in " + classFile);
                }
            }
            return strings;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
