package dev.exactly.examples.plain;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation cannot drift from code that compiles and runs: every {@code ```java} block of the
 * README, of {@code docs/*.md} and of the modules' READMEs is a verbatim part of a compiled source file of
 * the repository (tests run them: the examples', the modules' {@code ReadmeExampleTest}s), and every block preceded by {@code <!-- checked: path ... -->} is a verbatim
 * part of each file named there (the examples' poms, properties and the curl walk-through their tests
 * run). "Verbatim" ignores only the block's common indentation and trailing blanks.
 */
class DocumentationSnippetsTest {
    private static final Path ROOT =
            Path.of(System.getProperty("repository.root")).normalize();
    private static final Pattern FENCE = Pattern.compile("^```(\\S*)\\s*$");
    private static final Pattern CHECKED = Pattern.compile("^<!-- checked: (.+) -->$");
    private static final Map<Path, List<String>> LINES = new ConcurrentHashMap<>();

    /** A fenced block of a Markdown file. */
    record Block(Path file, int line, String language, List<String> lines, List<String> checkedIn) {
        String where() {
            return ROOT.relativize(file) + ":" + line;
        }
    }

    @Test
    void everyJavaBlockIsPartOfACompiledSourceAndEveryCheckedBlockOfItsFiles() {
        List<Block> blocks =
                documentation().stream().flatMap(file -> blocks(file).stream()).toList();
        List<Path> sources = compiledSources();
        List<String> problems = new ArrayList<>();
        for (Block block : blocks) {
            if (!block.checkedIn().isEmpty()) {
                for (String path : block.checkedIn()) {
                    Path file = ROOT.resolve(path);
                    if (!Files.isRegularFile(file)) {
                        problems.add(block.where() + ": checked in " + path + ", which does not exist");
                    } else if (!contains(file, block.lines())) {
                        problems.add(block.where() + ": this " + block.language() + " block is not verbatim in " + path
                                + " (update one from the other)");
                    }
                }
            } else if (block.language().equals("java") && sources.stream().noneMatch(f -> contains(f, block.lines()))) {
                problems.add(block.where() + ": this java block is in no compiled source; put it, verbatim, in a "
                        + "compiled and tested file (e.g. an example under examples/) and paste it back");
            }
        }
        assertThat(problems).as("documentation snippets").isEmpty();
        assertThat(blocks)
                .as("the README has java blocks and checked blocks")
                .anySatisfy(b -> assertThat(b.language()).isEqualTo("java"))
                .anySatisfy(b -> assertThat(b.checkedIn()).isNotEmpty());
    }

    @Test
    void aChangedLineIsNotVerbatim() {
        Block guard = blocks(ROOT.resolve("README.md")).stream()
                .filter(b ->
                        b.language().equals("java") && b.lines().stream().anyMatch(l -> l.contains("engine.execute")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("README: no java block calls engine.execute"));
        Path source = ROOT.resolve("examples/plain-java/src/main/java/dev/exactly/examples/plain/ChargeServer.java");
        assertThat(contains(source, guard.lines())).isTrue();

        List<String> changed = new ArrayList<>(guard.lines());
        int execute = changed.indexOf(changed.stream()
                .filter(l -> l.contains("engine.execute"))
                .findFirst()
                .orElseThrow());
        changed.set(execute, changed.get(execute) + " ");
        assertThat(contains(source, changed)).as("trailing blanks are ignored").isTrue();
        changed.set(execute, changed.get(execute).replace("engine.execute", "engine.executa"));
        assertThat(contains(source, changed)).as("a changed character is not").isFalse();
        changed = new ArrayList<>(guard.lines());
        changed.set(0, "    " + changed.getFirst());
        assertThat(contains(source, changed))
                .as("nor a changed relative indentation")
                .isFalse();
    }

    /** The README, {@code docs/*.md} and each module's README. */
    private static List<Path> documentation() {
        List<Path> files = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"));
                Stream<Path> modules = Files.list(ROOT)) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
            modules.map(module -> module.resolve("README.md"))
                    .filter(Files::isRegularFile)
                    .sorted()
                    .forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }

    static List<Block> blocks(Path file) {
        List<String> lines = lines(file);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int end = i + 1;
            while (end < lines.size() && !lines.get(end).startsWith("```")) {
                end++;
            }
            assertThat(end).as(file + ":" + (i + 1) + ": unclosed code block").isLessThan(lines.size());
            List<String> checkedIn = List.of();
            int before = i - 1;
            while (before >= 0 && lines.get(before).isBlank()) {
                before--;
            }
            if (before >= 0) {
                Matcher checked = CHECKED.matcher(lines.get(before).strip());
                if (checked.matches()) {
                    checkedIn = List.of(checked.group(1).strip().split("\\s+"));
                }
            }
            blocks.add(new Block(file, i + 1, open.group(1), List.copyOf(lines.subList(i + 1, end)), checkedIn));
            i = end;
        }
        return blocks;
    }

    /** Every Java source of the repository that a module compiles. */
    private static List<Path> compiledSources() {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> {
                        String path = ROOT.relativize(p).toString().replace('\\', '/');
                        return (path.contains("/src/main/java/") || path.contains("/src/test/java/"))
                                && !path.contains("/target/")
                                && !path.startsWith(".");
                    })
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether {@code snippet} is a run of lines of {@code file}, up to their common indentation. */
    static boolean contains(Path file, List<String> snippet) {
        List<String> wanted = dedent(snippet);
        if (wanted.isEmpty()) {
            return true;
        }
        List<String> lines = lines(file);
        String firstWanted = wanted.getFirst().strip();
        for (int i = 0; i + wanted.size() <= lines.size(); i++) {
            if (lines.get(i).strip().equals(firstWanted)
                    && dedent(lines.subList(i, i + wanted.size())).equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> dedent(List<String> lines) {
        int indent = lines.stream()
                .filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length())
                .min()
                .orElse(0);
        return lines.stream()
                .map(l -> l.isBlank() ? "" : l.substring(indent).stripTrailing())
                .toList();
    }

    private static List<String> lines(Path file) {
        return LINES.computeIfAbsent(file, f -> {
            try {
                return Files.readAllLines(f);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
