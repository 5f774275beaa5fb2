package dev.exactly.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Runs a documented curl walk-through for real: each {@code curl -i} command of a shell script (as the
 * README shows it) through {@code bash}, against a local port instead of the documented
 * {@code localhost:8080}. The comment above a command states what it answers,
 * {@code # what it does: STATUS [problem_code]}, and {@link Answer#mismatch()} checks that claim.
 */
public final class CurlWalkthrough {
    /** The address the documentation uses. */
    public static final String DOCUMENTED_ADDRESS = "localhost:8080";

    private static final Pattern CLAIM = Pattern.compile(":\\s+(\\d{3})\\b(?:\\s+([a-z]+(?:_[a-z]+)+)\\b)?");

    private CurlWalkthrough() {}

    /**
     * One command of the script.
     *
     * @param line           its first line in the script (1-based)
     * @param comment        the comment lines above it, without {@code #}
     * @param text           the command, continuation lines included
     * @param expectedStatus the status its comment claims
     * @param expectedCode   the problem {@code code} its comment claims, if any
     */
    public record Command(
            int line,
            String comment,
            String text,
            int expectedStatus,
            @Nullable String expectedCode) {}

    /** What curl printed for a command: the last response's status line, headers and body. */
    public record Answer(Command command, int status, Map<String, List<String>> headers, String body) {

        /** A header's first value, names compared without case. */
        public @Nullable String header(String name) {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null || values.isEmpty() ? null : values.getFirst();
        }

        /** Why the answer is not what the comment claims, or {@code null} when it is. */
        public @Nullable String mismatch() {
            if (status != command.expectedStatus()) {
                return "line " + command.line() + " (" + command.comment() + "): status " + status + ", not "
                        + command.expectedStatus() + ": " + body;
            }
            String code = command.expectedCode();
            if (code != null && !body.contains("\"code\":\"" + code + "\"")) {
                return "line " + command.line() + " (" + command.comment() + "): no code " + code + " in " + body;
            }
            return null;
        }
    }

    /** The commands of {@code script}, in order; each must be a {@code curl -i} command with a claim. */
    public static List<Command> commands(Path script) {
        List<String> lines;
        try {
            lines = Files.readAllLines(script);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Command> commands = new ArrayList<>();
        List<String> comment = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.startsWith("#!") || line.isEmpty()) {
                comment.clear();
            } else if (line.startsWith("#")) {
                comment.add(line.substring(1).strip());
            } else {
                int first = i;
                StringBuilder text = new StringBuilder(line);
                while (lines.get(i).stripTrailing().endsWith("\\")) {
                    i++;
                    text.append('\n').append(lines.get(i));
                }
                String said = String.join(" ", comment);
                Matcher claim = CLAIM.matcher(said);
                if (!text.toString().startsWith("curl -i ") || !claim.find()) {
                    throw new IllegalArgumentException(script + ":" + (first + 1)
                            + ": expected a 'curl -i' command under a comment '# what it does: STATUS [code]'");
                }
                commands.add(new Command(
                        first + 1, said, text.toString(), Integer.parseInt(claim.group(1)), claim.group(2)));
                comment.clear();
            }
        }
        return commands;
    }

    /** Runs {@code command} with {@code bash}, against {@code localhost:port}; fails if curl fails. */
    public static Answer run(Command command, int port) {
        String text = command.text().replace(DOCUMENTED_ADDRESS, "localhost:" + port);
        try {
            Process process = new ProcessBuilder("bash", "-c", text + " --silent --show-error --max-time 30")
                    .redirectErrorStream(false)
                    .start();
            process.getOutputStream().close();
            byte[] out = process.getInputStream().readAllBytes();
            String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("curl did not finish: " + text);
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("curl exited with " + process.exitValue()
                        + (process.exitValue() == 127 ? " (is curl installed?)" : "") + ": " + err + "\n" + text);
            }
            return parse(command, new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("could not run bash: " + text, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The final response of {@code curl -i} output, after any interim (1xx) ones. */
    private static Answer parse(Command command, String output) {
        String text = output.replace("\r\n", "\n");
        int at = 0;
        while (true) {
            int headEnd = text.indexOf("\n\n", at);
            String head = headEnd < 0 ? text.substring(at) : text.substring(at, headEnd);
            String[] headLines = head.split("\n", -1);
            if (!headLines[0].startsWith("HTTP/")) {
                throw new IllegalStateException("no HTTP status line in curl's output: " + output);
            }
            int status = Integer.parseInt(headLines[0].split(" ", -1)[1]);
            if (status < 200 && headEnd >= 0) {
                at = headEnd + 2;
                continue;
            }
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (int i = 1; i < headLines.length; i++) {
                int colon = headLines[i].indexOf(':');
                if (colon > 0) {
                    headers.computeIfAbsent(
                                    headLines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT),
                                    k -> new ArrayList<>())
                            .add(headLines[i].substring(colon + 1).strip());
                }
            }
            return new Answer(command, status, headers, headEnd < 0 ? "" : text.substring(headEnd + 2));
        }
    }
}
