package dev.exactly.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/** POSIX signals to one process, by its own PID (through {@code kill}, as an operator would send them). */
public final class Signals {
    private Signals() {}

    /** {@code kill -9}: the process dies at once, with no shutdown hook and no graceful close. */
    public static void kill(long pid) {
        send(pid, "KILL");
    }

    /** {@code kill -STOP}: the process is frozen (a GC pause, a stalled VM); its sockets stay open. */
    public static void stop(long pid) {
        send(pid, "STOP");
    }

    /** {@code kill -CONT}: a frozen process runs again. */
    public static void resume(long pid) {
        send(pid, "CONT");
    }

    private static void send(long pid, String signal) {
        if (pid <= 1) {
            throw new IllegalArgumentException("refusing to signal pid " + pid);
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + pid + " did not return");
            }
            if (kill.exitValue() != 0) {
                String out = new String(kill.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: " + out.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
