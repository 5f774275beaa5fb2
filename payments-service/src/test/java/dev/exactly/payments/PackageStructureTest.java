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
 * describes stays true:
 * <ul>
 *   <li>no two packages of the service depend on each other, directly or through others;</li>
 *   <li>only the web adapters ({@code api}, {@code security}, {@code demo}) and the answers' own package
 *       ({@code web}) use HTTP answers, servlets or Spring MVC; the business packages return business
 *       results.</li>
 * </ul>
 * The checks are shown to bite by running them on small graphs with a cycle and a leak.
 */
class PackageStructureTest {
    private static final String ROOT = "dev/exactly/payments";
    /** A class of the service named anywhere in a class file's constant pool (names, descriptors, signatures). */
    private static final Pattern SERVICE_CLASS = Pattern.compile(ROOT + "((?:/[a-z][a-z0-9_]*)*)/[A-Z][A-Za-z0-9_$]*");
    /** Where HTTP lives: the service's answers and web adapters, the idempotency filter, servlets, Spring MVC. */
    private static final List<String> HTTP = List.of(
            ROOT + "/web/",
            ROOT + "/api/",
            ROOT + "/security/",
            ROOT + "/demo/",
            "dev/exactly/idempotency/servlet/",
            "jakarta/servlet/",
            "org/springframework/http/",
            "org/springframework/web/");
    /** The packages that may speak HTTP. */
    private static final Set<String> WEB_ADAPTERS = Set.of("web", "api", "security", "demo");
    /** Packages that hold business code: they must not speak HTTP. */
    private static final Set<String> BUSINESS =
            Set.of("charge", "refund", "keys", "ledger", "json", "db", "webhooks", "ids", "reconciliation", "tasks");

    private static Map<String, Set<String>> graph;
    private static Map<String, Set<String>> httpUses;

    @BeforeAll
    static void readClasses() throws IOException, URISyntaxException {
        Path classes = Path.of(PaymentsApplication.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        assertThat(classes.resolve(ROOT)).as("the compiled main classes").isDirectory();
        graph = new TreeMap<>();
        httpUses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(classes.resolve(ROOT))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String pkg = packageOf(classes.relativize(file).toString().replace('\\', '/'));
                Set<String> uses = graph.computeIfAbsent(pkg, p -> new TreeSet<>());
                for (String constant : utf8Constants(file)) {
                    Matcher m = SERVICE_CLASS.matcher(constant);
                    while (m.find()) {
                        String used =
                                m.group(1).isEmpty() ? "(root)" : m.group(1).substring(1);
                        if (!used.equals(pkg)) {
                            uses.add(used);
                        }
                    }
                    for (String http : HTTP) {
                        if (constant.contains(http) && !http.equals(ROOT + "/" + pkg + "/")) {
                            httpUses.computeIfAbsent(pkg + " (" + file.getFileName() + ")", p -> new TreeSet<>())
                                    .add(http);
                        }
                    }
                }
            }
        }
    }

    @Test
    void theServiceHasItsPackages() {
        assertThat(graph.keySet())
                .contains(
                        "(root)",
                        "api",
                        "charge",
                        "config",
                        "db",
                        "json",
                        "keys",
                        "ledger",
                        "refund",
                        "security",
                        "web");
        assertThat(graph.get("api"))
                .as("the web layer calls the business packages")
                .contains("charge", "refund");
    }

    @Test
    void noPackageCycles() {
        assertThat(cycles(graph)).as("package cycles in %s", graph).isEmpty();
    }

    @Test
    void onlyTheWebAdaptersSpeakHttp() {
        assertThat(httpLeaks(httpUses)).as("business code that uses HTTP types").isEmpty();
        assertThat(graph.keySet())
                .as("every package is either business or web or wiring")
                .allMatch(p ->
                        BUSINESS.contains(p) || WEB_ADAPTERS.contains(p) || p.equals("config") || p.equals("(root)"));
    }

    @Test
    void theChecksFindACycleAndALeak() {
        Map<String, Set<String>> cyclic =
                Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
        assertThat(cycles(cyclic)).containsExactly(List.of("a", "b", "c"));
        assertThat(cycles(Map.of("a", Set.of("b"), "b", Set.of()))).isEmpty();
        assertThat(httpLeaks(Map.of(
                        "charge (X.class)", Set.of("jakarta/servlet/"), "api (Y.class)", Set.of("jakarta/servlet/"))))
                .containsExactly("charge (X.class) uses [jakarta/servlet/]");
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

    private static void connect(
            String node,
            Map<String, Set<String>> edges,
            Map<String, Integer> index,
            Map<String, Integer> low,
            Deque<String> stack,
            Set<String> onStack,
            List<List<String>> found,
            int[] counter) {
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

    private static List<String> httpLeaks(Map<String, Set<String>> uses) {
        List<String> leaks = new ArrayList<>();
        uses.forEach((where, http) -> {
            String pkg = where.substring(0, where.indexOf(' '));
            if (!WEB_ADAPTERS.contains(pkg)) {
                leaks.add(where + " uses " + http);
            }
        });
        return leaks;
    }

    private static String packageOf(String classFile) {
        String dir = classFile.substring(0, classFile.lastIndexOf('/'));
        return dir.equals(ROOT) ? "(root)" : dir.substring(ROOT.length() + 1);
    }

    /** The UTF-8 entries of a class file's constant pool (JVMS §4.4). */
    static List<String> utf8Constants(Path classFile) {
        try (InputStream raw = Files.newInputStream(classFile);
                DataInputStream in = new DataInputStream(raw)) {
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
